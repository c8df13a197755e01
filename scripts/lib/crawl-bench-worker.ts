/**
 * The worker process of `npm run bench:crawl` (scripts/bench/crawl.ts): the real workflows, the real store-backed I/O
 * activities (candidate pages, records, repository progress, finalize), and STAND-INS for the
 * LLM, sandbox, snapshot and analysis steps, each answering after a fixed delay. It measures
 * orchestration, not models or containers. Not part of the product: a benchmark fixture.
 *
 * Environment: the usual worker variables (TEMPORAL_ADDRESS, REPOST_DATA_DIR, task queues) plus
 *   REPOST_BENCH_STEP_MS   delay of each stand-in step (six per function)
 *   REPOST_BENCH_FUNCTIONS candidates the stand-in repository lists
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import type { CandidateList, ExecutionSummary, FunctionRef, LlmStepResult, PreparedFunction } from '../../activities/contracts';
import { createIoActivities } from '../../activities/io-activities';
import { LocalStore } from '../../activities/store/local';
import type { IoActivities, LlmActivities, SandboxActivities } from '../../activities/types';
import { runCommand } from './cli';
import { installQuietRuntime } from './workers';
import { loadConfig } from '../../temporal.config';

const STEP_MS = Number(process.env.REPOST_BENCH_STEP_MS ?? 166);
const FUNCTIONS = Number(process.env.REPOST_BENCH_FUNCTIONS ?? 2000);
const PAGE = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const config = loadConfig();
  const store = new LocalStore(config.dataDir);
  const real = createIoActivities({ config, store });
  // Texts the stand-ins point at, stored once.
  const source = await store.put('def f(x):\n    """Stand-in function."""\n    return x\n');
  const script = await store.put('def f(x):\n    return x\n\ndef test_f():\n    assert f(1) == f_new_implementation(1)\n');
  const result = await store.putJson({ coverage: { rate: 1, summary: 'stand-in: full coverage' } });
  const prepared: PreparedFunction = { sourceKey: source, contextKey: source, crossFile: false, standalone: true, dependencyCount: 0, localModules: [] };
  const ok = (): LlmStepResult => ({ ok: true, scriptKey: script, exchangeKey: '', promptVersion: 'stand-in@1', tokens: 100, installs: [] });
  const passed: ExecutionSummary = {
    status: 'passed', exitCode: 0, durationMs: STEP_MS, resultKey: result, summary: 'passed (stand-in)',
    coverage: { branchCoverage: 1, lineCoverage: 1, hasBranches: true, missingLines: 0, missingBranches: 0 }, packages: [],
  };

  const io: IoActivities = {
    ...real,
    async snapshotRepository({ source: src }) {
      return { ok: true, snapshot: { repoId: src.kind === 'local' ? (src.name ?? 'bench') : src.fullName, commit: 'stand-in', commitDate: null, split: 'train', license: null } };
    },
    async listCandidates({ run, snapshot, index, source: src }) {
      const pageKeys: string[] = [];
      for (let start = 0; start < FUNCTIONS; start += PAGE) {
        const refs: FunctionRef[] = [];
        for (let i = start; i < Math.min(FUNCTIONS, start + PAGE); i++) {
          refs.push({ functionId: `f${String(i).padStart(8, '0')}`, repoId: snapshot.repoId, commit: snapshot.commit, path: `m${Math.floor(i / 50)}.py`, qualname: `f${i}`, name: `f${i}`, split: 'train', license: null });
        }
        pageKeys.push(await store.putJson(refs));
      }
      const list: CandidateList = { pageKeys, candidates: FUNCTIONS, total: FUNCTIONS, dropped: 0, skippedFiles: 0 };
      await store.putRepoProgress(run.runId, { index, outcome: { repoId: snapshot.repoId, source: src, skipped: null, candidates: FUNCTIONS, accepted: 0, rejected: 0 }, candidatePages: pageKeys, done: false });
      return list;
    },
    async prepareFunction() {
      await sleep(STEP_MS);
      return { ok: true, prepared };
    },
  };
  const llm: LlmActivities = {
    generateSandboxScript: async () => (await sleep(STEP_MS), ok()),
    generateTests: async () => (await sleep(STEP_MS), ok()),
    debugScript: async () => (await sleep(STEP_MS), ok()),
    improveCoverage: async () => (await sleep(STEP_MS), ok()),
    checkFunctionality: async () => (await sleep(STEP_MS), { ok: true, answer: 'same', reasoning: 'stand-in', promptVersion: 'stand-in@1', tokens: 10 }),
    checkTests: async () => (await sleep(STEP_MS), { ok: true, answer: 'yes', reasoning: 'stand-in', promptVersion: 'stand-in@1', tokens: 10 }),
  };
  const sandbox: SandboxActivities = {
    executeScript: async () => (await sleep(STEP_MS), passed),
    astCheck: async () => (await sleep(STEP_MS), { equivalent: true, difference: null }),
  };

  installQuietRuntime();
  const connection = await NativeConnection.connect({ address: config.temporal.address! });
  const q = config.temporal.taskQueues;
  const slots = config.crawl.functionWindow * config.crawl.repoWindow + 8;
  const polling = process.env.REPOST_BENCH_POLLERS === 'autoscaling'
    ? { workflowTaskPollerBehavior: { type: 'autoscaling' as const }, activityTaskPollerBehavior: { type: 'autoscaling' as const } }
    : {};
  const base = { connection, namespace: config.temporal.namespace, ...polling };
  const workers = await Promise.all([
    Worker.create({ ...base, taskQueue: q.workflows, workflowsPath: require.resolve('../../workflows'), maxConcurrentWorkflowTaskExecutions: config.workers.workflowTaskConcurrency, maxCachedWorkflows: slots * 2 }),
    Worker.create({ ...base, taskQueue: q.io, activities: io, maxConcurrentActivityTaskExecutions: slots }),
    Worker.create({ ...base, taskQueue: q.llm, activities: llm, maxConcurrentActivityTaskExecutions: slots }),
    Worker.create({ ...base, taskQueue: q.sandbox, activities: sandbox, maxConcurrentActivityTaskExecutions: slots }),
  ]);
  console.log('workers polling (bench stand-ins)');
  const stop = () => workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await Promise.all(workers.map((w) => w.run()));
  await connection.close();
}

runCommand({ file: __filename, run: main });
