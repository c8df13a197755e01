/**
 * Worker process: which task queues this process polls and with what concurrency.
 * LLM activities and container activities are on separate queues so each scales and is
 * rate-limited alone; a deployment may run one process per role (`--roles llm`).
 *
 *   tsx workers/main.ts [--roles workflows,io,llm,sandbox]     (TEMPORAL_ADDRESS must be set)
 */
import * as os from 'node:os';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { createBenchmark, createEvalIo, createEvalLlm, createEvalSandbox, createIo, createLlm, createSandbox, createSandboxExecutor, openStore } from '../activities';
import { LlmGateway } from '../activities/llm';
import type { Store } from '../activities/store/types';
import { ensureSandboxImage } from '../sandbox-image/build';
import { loadConfig, type Config } from '../temporal.config';
import { checkRunningCrawls } from './store-check';

export const WORKER_ROLES = ['workflows', 'io', 'llm', 'sandbox'] as const;
export type WorkerRole = (typeof WORKER_ROLES)[number];

export interface RunWorkersOptions {
  config: Config;
  connection: NativeConnection;
  /** Sandbox image tag (required when the sandbox role runs). */
  image?: string;
  roles?: readonly WorkerRole[];
  /** A prebuilt workflow bundle (tests build it once); default: bundle `workflows/` at start. */
  workflowBundle?: { code: string };
  /** The store to use; default: the configured one (opened here, closed when the workers stop). */
  store?: Store;
  log?: (line: string) => void;
}

export interface RunningWorkers {
  /** Resolves when every worker has stopped. */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

let runtimeInstalled = false;
/** Keep the SDK's own logging to errors (it warns, for instance, that an activity-only worker has no workflows); the factory prints its own progress. */
export function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // Already installed by the host process.
  }
}

export async function startWorkers(options: RunWorkersOptions): Promise<RunningWorkers> {
  const { config, connection } = options;
  const roles = new Set(options.roles ?? WORKER_ROLES);
  const q = config.temporal.taskQueues;
  const base = { connection, namespace: config.temporal.namespace };
  const workers: Worker[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const needsStore = roles.has('io') || roles.has('llm') || roles.has('sandbox');
  let store: Store | null = options.store ?? null;
  if (!store && needsStore) {
    store = await openStore(config);
    const opened = store;
    cleanups.push(() => opened.close());
  }
  if (store) {
    // A worker that cannot reach its store, or whose store is not the one of the runs it would
    // serve, fails now with a message saying so, not one function at a time.
    try {
      await checkRunningCrawls(new Client({ connection, namespace: config.temporal.namespace }), store, [...roles].map((r) => q[r]));
    } catch (err) {
      for (const c of cleanups) await c().catch(() => undefined);
      throw err;
    }
  }

  if (roles.has('workflows')) {
    const source: Partial<WorkerOptions> = options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: require.resolve('../workflows') };
    workers.push(
      await Worker.create({
        ...base,
        ...source,
        taskQueue: q.workflows,
        maxConcurrentWorkflowTaskExecutions: config.workers.workflowTaskConcurrency,
      }),
    );
  }
  if (roles.has('io')) {
    workers.push(
      await Worker.create({
        ...base,
        taskQueue: q.io,
        activities: { ...createIo(config, store!), ...createBenchmark(config, store!), ...createEvalIo(config, store!) },
        maxConcurrentActivityTaskExecutions: config.workers.ioConcurrency,
      }),
    );
  }
  if (roles.has('llm')) {
    // One gateway per process: the pipeline's and the evaluation's calls share its rate limits.
    const gateway = new LlmGateway(config, store!);
    workers.push(
      await Worker.create({
        ...base,
        taskQueue: q.llm,
        activities: { ...createLlm(config, store!, gateway), ...createEvalLlm(config, store!, gateway) },
        maxConcurrentActivityTaskExecutions: config.workers.llmConcurrency,
        // The whole task queue's LLM rate, enforced by the Temporal server across all workers.
        ...(config.workers.llmActivitiesPerSecond ? { maxTaskQueueActivitiesPerSecond: config.workers.llmActivitiesPerSecond } : {}),
      }),
    );
  }
  if (roles.has('sandbox')) {
    if (!options.image) throw new Error('the sandbox role needs the sandbox image tag');
    const executor = createSandboxExecutor(config, options.image, `${os.hostname()}-${process.pid}`);
    const removed = await executor.cleanupLeftovers();
    if (removed > 0) options.log?.(`removed ${removed} sandbox container(s) left by a crashed worker`);
    executor.startLeftoverSweep((n) => options.log?.(`removed ${n} leftover sandbox container(s)`));
    cleanups.push(() => executor.close());
    workers.push(
      await Worker.create({
        ...base,
        taskQueue: q.sandbox,
        activities: { ...createSandbox(config, executor, store!), ...createEvalSandbox(config, executor, store!) },
        maxConcurrentActivityTaskExecutions: config.workers.sandboxConcurrency,
      }),
    );
  }

  const done = Promise.all(workers.map((w) => w.run())).then(async () => {
    for (const c of cleanups) await c();
  });
  return {
    done,
    async shutdown() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await done;
    },
  };
}

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.temporal.address) throw new Error('set TEMPORAL_ADDRESS (host:port) to run a standalone worker; `tsx scripts/start.ts` runs workers with the embedded server');
  const rolesArg = process.argv.find((a, i) => process.argv[i - 1] === '--roles');
  const roles = (rolesArg ? rolesArg.split(',') : [...WORKER_ROLES]) as WorkerRole[];
  for (const r of roles) if (!WORKER_ROLES.includes(r)) throw new Error(`unknown role ${r}; roles: ${WORKER_ROLES.join(', ')}`);
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

if (require.main === module) {
  main().catch((err: Error) => {
    console.error(err.message);
    process.exit(1);
  });
}
