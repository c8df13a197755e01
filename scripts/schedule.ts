/**
 * Live benchmarks: a Temporal Schedule that, every period, searches GitHub for repositories
 * created since the last firing (never before the cutoff), crawls them into a fresh run (an
 * evaluation set, per RepoST's live-benchmark idea) and writes its report. One firing, one run,
 * under the data directory's runs/ as <schedule id>-<firing time>.
 *
 *   tsx scripts/schedule.ts create --every 30d --github eval --since-cutoff 2024-09-01 [--limit N] [--id NAME]
 *   tsx scripts/schedule.ts list
 *   tsx scripts/schedule.ts delete NAME
 *
 * --github train|eval picks the split and its search filters (licenses, size, stars) from the
 * configuration; --limit (default 100) caps the repositories per firing (a seeded sample); --id
 * defaults to repost-benchmark-<split>. The filters and pipeline settings are frozen into the
 * schedule when it is created; each firing's crawl has a time limit (temporal.childTimeoutSec.crawl,
 * else derived from its repositories).
 *
 * Schedules live in the Temporal server (TEMPORAL_ADDRESS, else the embedded server's port on this
 * machine) and fire only while it runs and workers poll the task queues (tsx workers/main.ts)
 * against the same store (REPOST_STORE_URL, else the data directory).
 */
import { Client, Connection, ScheduleAlreadyRunning, ScheduleNotFoundError } from '@temporalio/client';
import { z } from 'zod';
import { RUN_ID_MAX_LENGTH, RunIdSchema } from '../activities/store/types';
import { IsoDaySchema } from '../activities/benchmark/window';
import { SPLITS } from '../activities/dataset/product-record';
import { openStore } from '../activities/store';
import { loadConfig } from '../temporal.config';
import { runCommand, UsageError } from './lib/cli';
import { createBenchmarkSchedule, deleteBenchmarkSchedule, listBenchmarkSchedules, parseEvery, type BenchmarkScheduleView } from './lib/schedules';

const CreateFlagsSchema = z.object({
  every: z.string().min(1, 'give the period, e.g. --every 30d'),
  github: z.enum(SPLITS),
  'since-cutoff': IsoDaySchema,
  limit: z.coerce.number().int().positive().default(100),
  // A schedule's id starts each of its runs' ids (`<id>-<firing time>`, 16 more characters).
  id: RunIdSchema.refine((id) => id.length <= RUN_ID_MAX_LENGTH - 16, `at most ${RUN_ID_MAX_LENGTH - 16} characters`).optional(),
});

function show(s: BenchmarkScheduleView): string {
  const lines = [
    `${s.scheduleId}: every ${s.every}, ${s.split} split, repositories created since ${s.sinceCutoff}, up to ${s.limit} per firing${s.paused ? ' (paused)' : ''}`,
    `  ${s.actionsTaken} firing(s) so far, ${s.running} running; next ${s.nextFiring ? s.nextFiring.toISOString() : 'none scheduled'}`,
    ...s.recent.map((r) => `  fired ${r.scheduledAt.toISOString()}: workflow ${r.workflowId}`),
  ];
  return lines.join('\n');
}

async function connect(): Promise<{ client: Client; close: () => Promise<void> }> {
  const config = loadConfig();
  const address = config.temporal.address ?? `127.0.0.1:${config.temporal.port}`;
  let connection: Connection;
  try {
    connection = await Connection.connect({ address, connectTimeout: '5s' });
  } catch (err) {
    throw new UsageError(`no Temporal server answers at ${address} (${(err as Error).message}): schedules need a running server; set TEMPORAL_ADDRESS, or keep the embedded one up with npm run ui`);
  }
  return { client: new Client({ connection, namespace: config.temporal.namespace }), close: () => connection.close() };
}

const OPTIONS = {
  every: { type: 'string' },
  github: { type: 'string' },
  'since-cutoff': { type: 'string' },
  limit: { type: 'string' },
  id: { type: 'string' },
} as const;

async function main(values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<number> {
  const [command, ...rest] = positionals;
  if (!command) throw new UsageError('give a command: create, list or delete');
  if (command === 'create') {
    if (rest.length) throw new UsageError(`create takes no positional argument (got ${rest.join(' ')})`);
    const flags = CreateFlagsSchema.parse(values);
    parseEvery(flags.every);
    const config = loadConfig();
    const { client, close } = await connect();
    const store = await openStore(config);
    try {
      const scheduleId = flags.id ?? `repost-benchmark-${flags.github}`;
      const created = await createBenchmarkSchedule(client, store, config, { scheduleId, every: flags.every, split: flags.github, sinceCutoff: flags['since-cutoff'], limit: flags.limit });
      console.log(`created schedule ${scheduleId}`);
      console.log(show(created));
      console.log('firings run on the workers polling the task queues of this configuration (tsx workers/main.ts)');
      return 0;
    } catch (err) {
      if (err instanceof ScheduleAlreadyRunning) throw new UsageError(`a schedule ${err.scheduleId} exists already; delete it first or choose --id`);
      throw err;
    } finally {
      await store.close();
      await close();
    }
  }
  if (command === 'list') {
    const { client, close } = await connect();
    try {
      const schedules = await listBenchmarkSchedules(client);
      console.log(schedules.length ? schedules.map(show).join('\n') : 'no live-benchmark schedule');
      return 0;
    } finally {
      await close();
    }
  }
  if (command === 'delete') {
    if (rest.length !== 1) throw new UsageError('delete takes the schedule id: tsx scripts/schedule.ts delete NAME');
    const { client, close } = await connect();
    try {
      await deleteBenchmarkSchedule(client, rest[0]!);
      console.log(`deleted schedule ${rest[0]}; firings already running finish, no new one starts`);
      return 0;
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) throw new UsageError(`no schedule ${rest[0]}`);
      throw err;
    } finally {
      await close();
    }
  }
  throw new UsageError(`unknown command ${command}: create, list or delete`);
}

runCommand({ file: __filename, options: OPTIONS, positionals: { min: 1, max: 2 }, run: ({ values, positionals }) => main(values, positionals) });
