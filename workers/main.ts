/**
 * A worker process: polls the task queues of the roles it is given, until SIGINT or SIGTERM.
 *
 *   tsx workers/main.ts [--roles workflows,io,llm,sandbox]     (TEMPORAL_ADDRESS must be set)
 *
 * Roles (default all): `workflows` (orchestration only), `io` (snapshots, analysis, records, run
 * files), `llm` (LLM calls), `sandbox` (container runs; builds or finds the sandbox image at start).
 */
import { NativeConnection } from '@temporalio/worker';
import { ensureSandboxImage } from '../sandbox-image/build';
import { runCommand, UsageError } from '../scripts/lib/cli';
import { installQuietRuntime, startWorkers, WORKER_ROLES, type WorkerRole } from '../scripts/lib/workers';
import { loadConfig } from '../temporal.config';

async function main(rolesFlag: string | undefined): Promise<void> {
  const roles = (rolesFlag ? rolesFlag.split(',') : [...WORKER_ROLES]) as WorkerRole[];
  for (const r of roles) if (!WORKER_ROLES.includes(r)) throw new UsageError(`unknown role ${r}; roles: ${WORKER_ROLES.join(', ')}`);
  const config = loadConfig();
  if (!config.temporal.address) throw new UsageError('set TEMPORAL_ADDRESS (host:port) to run a standalone worker; `tsx scripts/start.ts` runs workers with the embedded server');
  installQuietRuntime();
  let image: string | undefined;
  if (roles.includes('sandbox')) {
    image = config.sandbox.image ?? (await ensureSandboxImage()).tag;
  }
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const running = await startWorkers({ config, connection, image, roles, log: console.log });
  console.log(`workers polling ${roles.join(', ')} on ${config.temporal.address}`);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void running.shutdown());
  await running.done;
  await connection.close();
}

runCommand({ file: __filename, options: { roles: { type: 'string' } }, run: ({ values }) => main(values.roles) });
