/**
 * A run's progress, from any machine that reaches the run's store (REPOST_STORE_URL, or the local
 * data directory): repositories done, functions finished and in flight by stage, accepted,
 * rejected by stage, LLM calls, tokens and cost so far; and, when Temporal answers
 * (TEMPORAL_ADDRESS, else the embedded server's port), the crawl workflow's status.
 *
 *   tsx scripts/status.ts RUN [--json]
 *   tsx scripts/status.ts RUN --watch [--every SECONDS]   the same, then one line of progress
 *                                                        (with the time left) until the run ends
 *
 * RUN is a run id in the store or a run's folder; a folder whose run is not in the store is read
 * from its files (summary.json, run.json). A finished run's status does not ask Temporal.
 */
import { Client, Connection } from '@temporalio/client';
import { z } from 'zod';
import { openStore } from '../activities/store';
import { loadConfig } from '../temporal.config';
import { runCommand } from './lib/cli';
import { namedRun } from './lib/run-argument';
import { folderRunStatus, formatProgressLine, formatRunStatus, ProgressTracker, runStatus } from './lib/status';

/** How long to wait for Temporal before reporting from the store alone. */
const TEMPORAL_CONNECT_TIMEOUT_MS = 3000;

const FlagsSchema = z.object({ every: z.coerce.number().positive().default(5) });

async function main(values: { json?: boolean; watch?: boolean; every?: string }, runArg: string): Promise<number> {
  const { every } = FlagsSchema.parse(values);
  const config = loadConfig();
  const store = await openStore(config);
  let connection: Connection | null = null;
  try {
    const run = await namedRun(store, runArg);
    // A run folder whose run is not in the store: what its files say (a finished run, nothing in flight).
    if (!run.inStore) {
      const status = await folderRunStatus(run.folder!);
      console.log(values.json ? JSON.stringify(status, null, 2) : formatRunStatus(status));
      return 0;
    }
    const runId = run.runId;
    let client: Client | null = null;
    let temporalError: string | null = null;
    // A finished run has no workflows left to ask about: Temporal is not tried.
    if ((await store.getRun(runId))?.status !== 'finished') {
      const address = config.temporal.address ?? `127.0.0.1:${config.temporal.port}`;
      try {
        connection = await Connection.connect({ address, connectTimeout: TEMPORAL_CONNECT_TIMEOUT_MS });
        client = new Client({ connection, namespace: config.temporal.namespace });
      } catch (err) {
        temporalError = `${address}: ${(err as Error).message}`;
      }
    }
    const status = await runStatus(store, runId, { client, dataDir: config.dataDir });
    if (temporalError) status.temporal = { error: temporalError };
    console.log(values.json ? JSON.stringify(status, null, 2) : formatRunStatus(status));
    if (values.watch && status.status !== 'finished') {
      const tracker = new ProgressTracker(store, runId, client, Date.now, config.dataDir);
      for (;;) {
        await new Promise((r) => setTimeout(r, every * 1000));
        const sample = await tracker.sample();
        console.log(values.json ? JSON.stringify(sample) : `${new Date().toISOString().slice(11, 19)} ${formatProgressLine(sample)}`);
        if (sample.status.status === 'finished') break;
      }
    }
    return 0;
  } finally {
    await connection?.close();
    await store.close();
  }
}

runCommand({
  file: __filename,
  options: { json: { type: 'boolean' }, watch: { type: 'boolean' }, every: { type: 'string' } },
  positionals: { min: 1, max: 1 },
  run: ({ values, positionals }) => main(values, positionals[0]!),
});
