/**
 * Orchestration benchmark (`npm run bench:crawl`): one crawl of one repository with N functions
 * on a real Temporal dev server, through the real workflows and the real store, with STAND-IN
 * activities for the LLM, sandbox, snapshot and analysis steps that answer after a fixed delay
 * (scripts/lib/crawl-bench-worker.ts). For each size it prints:
 *   - functions per minute;
 *   - orchestration overhead per function: a function workflow's wall time minus its stand-in
 *     activity time, in ms and as a share of the activity time;
 *   - the largest history of the run (events and bytes), crawl and repository executions included;
 *   - the worker process's peak memory (VmHWM).
 *
 * Flags: --functions 2000,20000  --work-ms 1000 (activity time per function, six stand-in steps)
 *        --window 32 (functions in flight)  --continue-as-new 200  --address HOST:PORT (an existing server)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { z } from 'zod';
import { LocalStore } from '../../activities/store/local';
import { loadConfig } from '../../temporal.config';
import { runCommand } from '../lib/cli';
import { startCrawl } from '../lib/crawl';
import { freePort, resolveTemporalCli, startDevServer } from '../lib/temporal-server';

const FlagsSchema = z
  .object({
    functions: z.string().default('2000,20000').transform((s) => s.split(',').map(Number)).pipe(z.array(z.number().int().positive())),
    'work-ms': z.coerce.number().int().positive().default(1000),
    window: z.coerce.number().int().positive().default(32),
    'continue-as-new': z.coerce.number().int().positive().default(200),
    /** An existing Temporal server to measure against; default: a dev server started for the benchmark. */
    address: z.string().optional(),
  })
  .transform((f) => ({ functions: f.functions, workMs: f['work-ms'], window: f.window, continueAsNew: f['continue-as-new'], address: f.address }));

const OPTIONS = { functions: { type: 'string' }, 'work-ms': { type: 'string' }, window: { type: 'string' }, 'continue-as-new': { type: 'string' }, address: { type: 'string' } } as const;

const STEPS_PER_FUNCTION = 6;

function peakRssMb(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

interface Measured {
  functions: number;
  seconds: number;
  perMinute: number;
  overheadMs: number;
  overheadShare: number;
  largestEvents: number;
  largestBytes: number;
  largestId: string;
  peakMb: number;
}

async function measure(n: number, flags: z.infer<typeof FlagsSchema>, address: string): Promise<Measured> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-bench-crawl-'));
  const tag = `bench${n}-${Date.now().toString(36)}`;
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: address,
    REPOST_DATA_DIR: dataDir,
    REPOST_TEMPORAL_TASK_QUEUES_WORKFLOWS: `${tag}-wf`,
    REPOST_TEMPORAL_TASK_QUEUES_IO: `${tag}-io`,
    REPOST_TEMPORAL_TASK_QUEUES_LLM: `${tag}-llm`,
    REPOST_TEMPORAL_TASK_QUEUES_SANDBOX: `${tag}-sb`,
    REPOST_CRAWL_FUNCTION_WINDOW: String(flags.window),
    REPOST_CRAWL_REPO_WINDOW: '1',
    REPOST_CRAWL_CONTINUE_AS_NEW_AFTER: String(flags.continueAsNew),
    REPOST_CRAWL_MAX_FUNCTIONS_PER_REPO: String(n),
    REPOST_WORKERS_WORKFLOW_TASK_CONCURRENCY: '40',
    REPOST_BENCH_STEP_MS: String(Math.round(flags.workMs / STEPS_PER_FUNCTION)),
    REPOST_BENCH_FUNCTIONS: String(n),
  };
  const config = loadConfig({ env });
  const worker = spawn(process.execPath, ['-r', 'tsx/cjs', path.join(__dirname, '..', 'lib', 'crawl-bench-worker.ts')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    worker.stdout!.on('data', (d: Buffer) => /workers polling/.test(d.toString()) && resolve());
    worker.once('exit', (code) => reject(new Error(`bench worker exited (${code})`)));
  });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const store = new LocalStore(dataDir);
  try {
    const started = Date.now();
    const crawl = await startCrawl({ config, client, store, sources: [{ kind: 'local', path: '/stand-in', name: 'bench', pinned: { repoId: 'bench', commit: 'stand-in' } }], runId: tag });
    const summary = await crawl.result();
    const seconds = (Date.now() - started) / 1000;
    if (summary.functions !== n) throw new Error(`expected ${n} records, the run has ${summary.functions}`);
    const peakMb = peakRssMb(worker.pid!);

    // Per function: wall time of its workflow minus the stand-in work it waited for.
    let wall = 0;
    let count = 0;
    let largest = { events: 0, bytes: 0, id: '' };
    for await (const wf of client.workflow.list({ query: `RepostRunId = "${tag}"` })) {
      if (wf.type === 'functionWorkflow' && wf.closeTime) {
        wall += wf.closeTime.getTime() - wf.startTime.getTime();
        count += 1;
        if (count % 200 !== 1) continue; // function histories are all alike: sample them
      }
      const d = await client.workflow.getHandle(wf.workflowId, wf.runId).describe();
      if ((d.historySize ?? 0) > largest.bytes) largest = { events: d.historyLength, bytes: d.historySize ?? 0, id: `${wf.type} ${wf.workflowId}` };
    }
    const overheadMs = wall / count - flags.workMs;
    return {
      functions: n,
      seconds,
      perMinute: (n / seconds) * 60,
      overheadMs,
      overheadShare: overheadMs / flags.workMs,
      largestEvents: largest.events,
      largestBytes: largest.bytes,
      largestId: largest.id,
      peakMb,
    };
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
    await connection.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(flags: z.infer<typeof FlagsSchema>): Promise<void> {
  const port = await freePort();
  const server = flags.address
    ? { address: flags.address, stop: async () => undefined }
    : await startDevServer({ cli: resolveTemporalCli(process.env.REPOST_TEMPORAL_CLI_PATH), port, namespace: 'default', logFile: path.join(os.tmpdir(), `repost-bench-temporal-${port}.log`) });
  console.log(`crawl orchestration benchmark: stand-in activities (${STEPS_PER_FUNCTION} steps, ${flags.workMs} ms of work per function), ${flags.window} functions in flight, continue-as-new every ${flags.continueAsNew}, dev server at ${server.address}`);
  const rows: Measured[] = [];
  try {
    for (const n of flags.functions) {
      const m = await measure(n, flags, server.address);
      rows.push(m);
      console.log(
        `${String(m.functions).padStart(6)} functions: ${m.seconds.toFixed(0)} s, ${m.perMinute.toFixed(0)} functions/min, ` +
          `overhead ${m.overheadMs.toFixed(0)} ms per function (${(m.overheadShare * 100).toFixed(1)}% of ${flags.workMs} ms), ` +
          `largest history ${m.largestEvents} events / ${(m.largestBytes / 1024).toFixed(0)} KiB (${m.largestId}), worker peak ${m.peakMb.toFixed(0)} MB`,
      );
    }
    if (rows.length >= 2) {
      const [a, b] = [rows[0]!, rows[rows.length - 1]!];
      console.log(
        `ratios ${b.functions}/${a.functions}: functions/min ${(b.perMinute / a.perMinute).toFixed(2)}x, overhead ${(b.overheadMs / a.overheadMs).toFixed(2)}x, ` +
          `largest history ${(b.largestBytes / a.largestBytes).toFixed(2)}x, worker peak memory ${(b.peakMb / a.peakMb).toFixed(2)}x`,
      );
    }
  } finally {
    await server.stop();
  }
}

runCommand({ file: __filename, options: OPTIONS, run: ({ values }) => main(FlagsSchema.parse(values)) });
