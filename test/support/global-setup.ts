/**
 * Integration suites share one real Temporal dev server (in memory, random port), one throwaway
 * PostgreSQL server (temporary folder, random loopback port), one prebuilt workflow bundle and the
 * locally built sandbox image. Each suite uses its own task queues, data directory and database,
 * so suites never see each other's work.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { ensureSandboxImage } from '../../sandbox-image/build';
import { startPostgresServer } from '../../scripts/lib/postgres-server';
import { freePort, resolveTemporalCli, startDevServer } from '../../scripts/lib/temporal-server';

export default async function globalSetup(): Promise<void> {
  const port = await freePort();
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-test-temporal-'));
  const server = await startDevServer({ cli: resolveTemporalCli(process.env.REPOST_TEMPORAL_CLI_PATH), port, namespace: 'default', logFile: path.join(logDir, 'temporal.log') });
  (globalThis as Record<string, unknown>).__REPOST_TEMPORAL__ = server;
  process.env.REPOST_TEST_TEMPORAL_ADDRESS = server.address;

  const postgres = await startPostgresServer();
  (globalThis as Record<string, unknown>).__REPOST_POSTGRES__ = postgres;
  // The maintenance database: suites create a database of their own in it (test/support/store-database.ts).
  process.env.REPOST_TEST_STORE_URL = postgres.url;

  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: quietLogger });
  const bundleFile = path.join(logDir, 'workflow-bundle.js');
  fs.writeFileSync(bundleFile, code);
  process.env.REPOST_TEST_WORKFLOW_BUNDLE = bundleFile;

  process.env.REPOST_TEST_SANDBOX_IMAGE = process.env.REPOST_SANDBOX_IMAGE ?? (await ensureSandboxImage()).tag;
}

const noop = () => undefined;
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => console.error(m) };
