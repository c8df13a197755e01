/**
 * A live benchmark as a user sets it up: `tsx workers/main.ts` in its own process (the GitHub
 * source's Octokit is an ES module jest cannot load), `tsx scripts/schedule.ts create` with a
 * period of seconds on the test's Temporal server, a local GitHub stand-in serving the demo
 * repository as created today, scripted LLM responses over HTTP and real containers. The schedule
 * fires twice, each firing a run with its dataset and report; then `list` and `delete`.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { pipelineSettingsFrom } from '../../activities/run-settings';
import { DatasetRecordSchema } from '../../activities/store/records';
import { crawlWorkflowBudgetMs } from '../../activities/workflow-budgets';
import { loadConfig } from '../../temporal.config';
import { boundedKeyword } from '../../workflows/ids';
import { RunIdKey } from '../../workflows/search-attributes';
import { loadLlmScript, startScriptedLlmServer, type ScriptedLlmServer } from '../../scripts/scripted-llm/server';
import type { BenchmarkOutcome } from '../../workflows/benchmark';
import { demoRepo, startDemoGitHub } from '../fixtures/github/demo-repo';
import type { FakeGitHub } from '../fixtures/github/server';
import { requireEnv } from '../support/factory';

const ROOT = path.resolve(__dirname, '../..');
const DEMO_SCRIPT = path.join(ROOT, 'scripts/demo/scripted-llm-responses.json');

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe('tsx scripts/schedule.ts: a live benchmark that fires on a schedule', () => {
  const q = randomBytes(4).toString('hex');
  const scheduleId = `bench-${q}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-schedule-'));
  let gh: FakeGitHub;
  let llm: ScriptedLlmServer;
  let worker: ChildProcess;
  let workerLog = '';
  let connection: Connection;
  let client: Client;
  let env: NodeJS.ProcessEnv;

  const schedule = async (...args: string[]) => {
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['-r', 'tsx/cjs', 'scripts/schedule.ts', ...args], { cwd: ROOT, env });
      return { code: 0, stdout, stderr: '' };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  };

  beforeAll(async () => {
    // Created today (UTC), after the cutoff: inside every firing's window. The other repository
    // was created before the cutoff and must never be crawled.
    gh = await startDemoGitHub([demoRepo('fresh', new Date().toISOString().replace(/\.\d+Z$/, 'Z')), demoRepo('old', '2024-01-01T00:00:00Z')]);
    llm = await startScriptedLlmServer(loadLlmScript(DEMO_SCRIPT));
    const address = requireEnv('REPOST_TEST_TEMPORAL_ADDRESS');
    env = {
      ...process.env,
      TEMPORAL_ADDRESS: address,
      REPOST_DATA_DIR: dataDir,
      REPOST_GITHUB_BASE_URL: gh.baseURL,
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'scripted',
      REPOST_SANDBOX_IMAGE: requireEnv('REPOST_TEST_SANDBOX_IMAGE'),
      REPOST_TEMPORAL_TASK_QUEUES_WORKFLOWS: `sch-wf-${q}`,
      REPOST_TEMPORAL_TASK_QUEUES_IO: `sch-io-${q}`,
      REPOST_TEMPORAL_TASK_QUEUES_LLM: `sch-llm-${q}`,
      REPOST_TEMPORAL_TASK_QUEUES_SANDBOX: `sch-sb-${q}`,
    };
    worker = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    worker.stdout!.on('data', (d: Buffer) => (workerLog += d.toString()));
    worker.stderr!.on('data', (d: Buffer) => (workerLog += d.toString()));
    await until('the worker process to poll', 120_000, async () => {
      if (worker.exitCode !== null) throw new Error(`the worker process exited: ${workerLog}`);
      return workerLog.includes('workers polling') ? true : null;
    });
    connection = await Connection.connect({ address });
    client = new Client({ connection });
  });

  afterAll(async () => {
    await client?.schedule.getHandle(scheduleId).delete().catch(() => undefined);
    // Firings still running after the test are stopped, so they do not outlive the worker.
    if (client) {
      for await (const wf of client.workflow.list({ query: `WorkflowType = "benchmarkWorkflow" AND ExecutionStatus = "Running"` })) {
        if (wf.workflowId.startsWith(scheduleId)) await client.workflow.getHandle(wf.workflowId).terminate('test over').catch(() => undefined);
      }
    }
    await connection?.close();
    if (worker && worker.exitCode === null) {
      const exited = new Promise((r) => worker.once('exit', r));
      worker.kill('SIGTERM');
      await exited;
    }
    await gh?.close();
    await llm?.close();
  });

  it('fires twice, each firing a run of the new repositories with its report; list and delete', async () => {
    const cutoff = new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10);
    const created = await schedule('create', '--every', '5s', '--github', 'eval', '--since-cutoff', cutoff, '--limit', '5', '--id', scheduleId);
    expect(created.stderr).toBe('');
    expect(created.stdout).toContain(`created schedule ${scheduleId}`);
    expect(created.stdout).toContain(`every 5s, eval split, repositories created since ${cutoff}, up to 5 per firing`);

    const handle = client.schedule.getHandle(scheduleId);
    const fired = await until('two firings', 240_000, async () => {
      const d = await handle.describe();
      return d.info.recentActions.length >= 2 ? d.info.recentActions.slice(0, 2) : null;
    });
    const outcomes = await Promise.all(fired.map((a) => client.workflow.getHandle(a.action.workflow.workflowId).result() as Promise<BenchmarkOutcome>));

    const listed = await schedule('list');
    expect(listed.stdout).toContain(`${scheduleId}: every 5s, eval split`);
    expect(listed.stdout).toMatch(/[2-9]\d* firing\(s\) so far/);
    const deleted = await schedule('delete', scheduleId);
    expect(deleted.stdout).toContain(`deleted schedule ${scheduleId}`);
    expect((await schedule('list')).stdout).not.toContain(scheduleId);
    const again = await schedule('delete', scheduleId);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`no schedule ${scheduleId}`);

    // Two firings, two runs, each with the new repository only, its dataset and its report, and
    // the settings frozen when the schedule was created.
    const settingsKeys = new Set<string>();
    const today = new Date().toISOString().slice(0, 10);
    expect(new Set(outcomes.map((o) => o.runId)).size).toBe(2);
    for (const o of outcomes) {
      expect(o.runId.startsWith(`${scheduleId}-`)).toBe(true);
      expect(o.repositories).toBe(1);
      expect(o.window).toEqual({ from: today, to: today });
      // An evaluation set: word_frequencies' sandboxed AST differs and is refused (as collapse_spaces' weak test).
      expect(o.summary).toMatchObject({ functions: 4, accepted: 2, rejected: 2 });
      const runDir = path.join(dataDir, 'runs', o.runId);
      expect(o.outDir).toBe(runDir);
      expect(o.report).toBe(path.join(runDir, 'report.html'));
      expect(fs.readFileSync(o.report!, 'utf8')).toContain(`Run <code>${o.runId}</code>`);
      const records = fs.readFileSync(path.join(runDir, 'dataset.jsonl'), 'utf8').trim().split('\n').map((l) => DatasetRecordSchema.parse(JSON.parse(l)));
      expect(records.map((r) => r.repo_name)).toEqual(['demo/fresh', 'demo/fresh']);
      expect(records.map((r) => [r.split, r.license, r.coverage_threshold])).toEqual(Array(2).fill(['eval', 'mit', 1]));
      const run = JSON.parse(fs.readFileSync(path.join(runDir, 'run.json'), 'utf8')) as { sourceList: unknown[]; settingsKey: string };
      expect(run.sourceList).toEqual([{ kind: 'github', fullName: 'demo/fresh', split: 'eval' }]);
      settingsKeys.add(run.settingsKey);
    }
    expect(settingsKeys.size).toBe(1);
    // Each firing's crawl runs as a child with a time limit (derived from its one repository) and
    // the run's id as its bounded search attribute.
    const settings = pipelineSettingsFrom(loadConfig({ env }));
    for (const o of outcomes) {
      const crawl = await client.workflow.getHandle(`${o.runId}/crawl`).describe();
      const limit = crawl.raw.executionConfig?.workflowExecutionTimeout;
      expect(Number(limit?.seconds ?? 0) * 1000 + Math.round((limit?.nanos ?? 0) / 1e6)).toBe(crawlWorkflowBudgetMs(settings, 1));
      expect(crawl.typedSearchAttributes.get(RunIdKey)).toBe(boundedKeyword(o.runId));
    }
    // The firing workflow replays deterministically against its recorded history.
    for (const a of fired) {
      const history = await client.workflow.getHandle(a.action.workflow.workflowId).fetchHistory();
      await Worker.runReplayHistory({ workflowBundle: { code: fs.readFileSync(requireEnv('REPOST_TEST_WORKFLOW_BUNDLE'), 'utf8') } }, history, a.action.workflow.workflowId);
    }
    // The search asked GitHub for the window's days only.
    expect(gh.log.some((l) => l.startsWith('GET /search/repositories') && decodeURIComponent(l).includes(`created:${today}..${today}`))).toBe(true);
  });

  it('refuses bad flags with a clear message', async () => {
    const bad = await schedule('create', '--every', 'soon', '--github', 'eval', '--since-cutoff', '2024-09-01');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--every soon: not a duration');
    const badDate = await schedule('create', '--every', '30d', '--github', 'eval', '--since-cutoff', '2024-13-45');
    expect(badDate.code).toBe(2);
    expect(badDate.stderr).toContain('--since-cutoff');
  });
});
