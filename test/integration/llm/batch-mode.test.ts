/**
 * Batch mode end to end: the demo crawl with its LLM steps in batch mode, on the real Temporal
 * server, real containers and the scripted server's Batch API over HTTP, gives the same dataset as
 * the same crawl live; with the file exchange, a helper answers `requests.jsonl` by writing
 * `results.jsonl` beside it; and an LLM worker process killed (SIGKILL) while a batch waits is
 * replaced by a new one that picks the batch up and finishes the crawl without asking anything again.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { DatasetRecordSchema, RejectionSchema } from '../../../activities/store/records';
import { runCrawl, startCrawl } from '../../../scripts/lib/crawl';
import { Client, Connection } from '@temporalio/client';
import { LocalStore } from '../../../activities/store/local';
import { loadLlmScript, startScriptedLlmServer } from '../../../scripts/scripted-llm/server';
import { formatRunStatus, runStatus } from '../../../scripts/lib/status';
import { installQuietRuntime, startWorkers } from '../../../scripts/lib/workers';
import type { Config, DeepPartial } from '../../../temporal.config';
import { requireEnv, startTestFactory, testConfig, workerEnv } from '../../support/factory';
import { spawnWorker } from '../../support/processes';

const DEMO_REPO = path.resolve(__dirname, '../../../scripts/demo/example-repo');
const DEMO_SCRIPT = path.resolve(__dirname, '../../../scripts/demo/scripted-llm-responses.json');
const SOURCE = [{ kind: 'local' as const, path: DEMO_REPO, name: 'textkit' }];

/** Fields of a record that name the run, the time or the process rather than what was made. */
const RUN_FIELDS = new Set(['run_id', 'created_at', 'recorded_at', 'duration_ms', 'exchange_keys', 'llm_usage', 'usage']);

function readJsonl(file: string): Record<string, unknown>[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A dataset with the run's own fields left out, in a stable order. */
function comparable(file: string, schema: { parse(v: unknown): unknown } = DatasetRecordSchema): Record<string, unknown>[] {
  return readJsonl(file)
    .map((r) => schema.parse(r) as Record<string, unknown>)
    .map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !RUN_FIELDS.has(k))))
    .sort((a, b) => String(a.qualname).localeCompare(String(b.qualname)));
}

/** The batch settings of these tests: a batch goes out 1 s after its first request, and is looked at every 200 ms. */
const PRICES = { 'scripted-test': { inputPerMTok: 2, outputPerMTok: 8 } };
const BATCH: DeepPartial<Config> = { llm: { cache: { enabled: false }, prices: PRICES, batch: { maxWaitSec: 1, pollSec: 0.2 } } };

/** The run's LLM usage as summary.json gives it. */
const usageOf = (outDir: string) => JSON.parse(fs.readFileSync(path.join(outDir, 'summary.json'), 'utf8')).llm as Record<string, any>;
const batchRun = (config: Config): Config => ({ ...config, llm: { ...config.llm, mode: 'batch' } });

describe('batch mode: the demo crawl', () => {
  let live: { dataset: Record<string, unknown>[]; rejections: Record<string, unknown>[]; calls: number; usage: Record<string, any> };

  beforeAll(async () => {
    const factory = await startTestFactory(loadLlmScript(DEMO_SCRIPT), { llm: { cache: { enabled: false }, prices: PRICES } });
    try {
      const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: SOURCE, runId: 'live-demo' });
      expect(summary.accepted).toBe(3);
      live = { dataset: comparable(summary.datasetFile), rejections: comparable(path.join(summary.outDir, 'rejections.jsonl'), RejectionSchema), calls: factory.llm.requests.length, usage: usageOf(summary.outDir) };
    } finally {
      await factory.close();
    }
  });

  it('through the Batch API gives the same dataset as live, each request asked once, and its usage apart from live', async () => {
    const factory = await startTestFactory(loadLlmScript(DEMO_SCRIPT), BATCH);
    try {
      const summary = await runCrawl({ config: batchRun(factory.config), client: factory.client, store: factory.store, sources: SOURCE, runId: 'batch-demo' });
      expect(comparable(summary.datasetFile)).toEqual(live.dataset);
      expect(comparable(path.join(summary.outDir, 'rejections.jsonl'), RejectionSchema)).toEqual(live.rejections);
      // Nothing went live: every call went through a batch, one line per request, as many as live made.
      const stats = factory.llm.batchStats();
      expect(factory.llm.requests.filter((r) => !r.batch)).toHaveLength(0);
      expect(Object.keys(stats.linesByCustomId)).toHaveLength(live.calls);
      expect(Object.values(stats.linesByCustomId).every((n) => n === 1)).toBe(true);
      expect(stats.batchesCreated).toBeGreaterThanOrEqual(1);
      // summary.json and the report give live calls and batch answers apart; the batch's are at the batch price (half, by default).
      const usage = usageOf(summary.outDir);
      expect(live.usage.byMode.batch.calls).toBe(0);
      expect(live.usage.byMode.live.calls).toBe(live.calls);
      expect(usage.byMode.live.calls).toBe(0);
      expect(usage.byMode.batch.calls).toBe(live.calls);
      expect(usage.byMode.batch.promptTokens).toBe(live.usage.total.promptTokens);
      expect(usage.byMode.batch.completionTokens).toBe(live.usage.total.completionTokens);
      expect(live.usage.total.costUsd).toBeGreaterThan(0);
      expect(usage.byMode.batch.costUsd).toBeCloseTo(live.usage.total.costUsd / 2, 10);
      const report = fs.readFileSync(path.join(summary.outDir, 'report.html'), 'utf8');
      expect(report).toContain('batch answers');
      // No request is left waiting.
      expect(fs.readdirSync(path.join(factory.dataDir, 'llm-pending'))).toEqual([]);
    } finally {
      await factory.close();
    }
  });

  it('through the file exchange: a helper answers requests.jsonl with results.jsonl and the crawl finishes', async () => {
    const factory = await startTestFactory(loadLlmScript(DEMO_SCRIPT), { llm: { ...BATCH.llm, batch: { ...BATCH.llm!.batch, backend: 'files' } } });
    const answered = new Set<string>();
    let stop = false;
    // The helper: for each batch folder with a request file and no results, each request is answered
    // by the demo's scripted responses (the scripted server's chat endpoint), and the answers are
    // written in the Batch API's output format beside it.
    const helper = (async () => {
      const root = path.join(factory.dataDir, 'llm-batches');
      while (!stop) {
        for (const id of fs.existsSync(root) ? fs.readdirSync(root) : []) {
          const requests = path.join(root, id, 'requests.jsonl');
          if (answered.has(id) || !fs.existsSync(path.join(root, id, 'batch.json'))) continue;
          const lines = readJsonl(requests) as { custom_id: string; body: unknown }[];
          const out: string[] = [];
          for (const [i, line] of lines.entries()) {
            const res = await fetch(`${factory.llm.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(line.body) });
            out.push(JSON.stringify({ id: `line-${i}`, custom_id: line.custom_id, response: { status_code: res.status, request_id: `req-${i}`, body: await res.json() }, error: null }));
          }
          const tmp = path.join(root, id, '.results.tmp');
          fs.writeFileSync(tmp, `${out.join('\n')}\n`);
          fs.renameSync(tmp, path.join(root, id, 'results.jsonl'));
          answered.add(id);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    try {
      const summary = await runCrawl({ config: batchRun(factory.config), client: factory.client, store: factory.store, sources: SOURCE, runId: 'files-demo' });
      expect(comparable(summary.datasetFile)).toEqual(live.dataset);
      expect(answered.size).toBeGreaterThanOrEqual(1);
      // Every request was answered by the helper, none by a live call or the Batch API.
      expect(factory.llm.requests).toHaveLength(live.calls);
      expect(factory.llm.batchStats().batchesCreated).toBe(0);
    } finally {
      stop = true;
      await helper;
      await factory.close();
    }
  });

  it('picks a waiting batch up after its LLM worker process is killed (SIGKILL) and another started, and asks nothing again', async () => {
    // The Batch API answers only when the test says so: its clock stands still until then (no batch
    // is ever done), then runs an hour ahead (every batch, old or new, is done at its next look).
    let answering = false;
    const t0 = Date.now();
    const llm = await startScriptedLlmServer(loadLlmScript(DEMO_SCRIPT), { batches: { clock: () => (answering ? Date.now() + 3600_000 : t0), completeAfterMs: 1 } });
    const config = testConfig(llm.url, BATCH);
    const store = new LocalStore(config.dataDir);
    const address = requireEnv('REPOST_TEST_TEMPORAL_ADDRESS');
    installQuietRuntime();
    const native = await NativeConnection.connect({ address });
    // The workflows, io and sandbox roles here; the LLM role (and its collector) in a process of its own.
    const others = await startWorkers({
      config,
      connection: native,
      store,
      roles: ['workflows', 'io', 'sandbox'],
      image: config.sandbox.image,
      workflowBundle: { code: fs.readFileSync(requireEnv('REPOST_TEST_WORKFLOW_BUNDLE'), 'utf8') },
    });
    const connection = await Connection.connect({ address });
    const client = new Client({ connection, namespace: config.temporal.namespace });
    const env = { ...workerEnv(config), REPOST_LLM_BATCH_MAX_WAIT_SEC: '1', REPOST_LLM_BATCH_POLL_SEC: '0.2' };
    let llmWorker = spawnWorker(env, ['llm']);
    try {
      await llmWorker.ready;
      const handle = await startCrawl({ config: batchRun(config), client, store, sources: SOURCE, runId: 'restart-demo' });
      const pendingDir = path.join(config.dataDir, 'llm-pending');
      // Wait until requests wait in a batch handed over to the service, each noted with its batch.
      const sent = async () => {
        const b = (await runStatus(store, 'restart-demo', { dataDir: config.dataDir })).batch;
        return llm.batchStats().batchesCreated > 0 && b !== null && b !== undefined && b.waiting > 0 && b.unsent === 0;
      };
      for (let i = 0; i < 600 && !(await sent()); i++) await new Promise((r) => setTimeout(r, 200));
      expect(llm.batchStats().batchesCreated).toBeGreaterThanOrEqual(1);
      const waiting = fs.readdirSync(pendingDir).length;
      expect(waiting).toBeGreaterThan(0);
      // The status view shows them: how many wait, in how many batches, since when.
      const status = await runStatus(store, 'restart-demo', { dataDir: config.dataDir, now: () => Date.now() + 60_000 });
      expect(status.batch).toMatchObject({ waiting, unsent: 0 });
      expect(status.batch!.batches).toBeGreaterThanOrEqual(1);
      expect(status.batch!.oldestAgeMs).toBeGreaterThanOrEqual(60_000);
      expect(formatRunStatus(status)).toContain(`LLM batches: ${waiting} request(s) waiting`);
      // The LLM worker dies at once; a new process, knowing only the data directory, takes over.
      await llmWorker.kill9();
      llmWorker = spawnWorker(env, ['llm']);
      await llmWorker.ready;
      answering = true;
      const summary = await handle.result();
      expect(summary.accepted).toBe(live.dataset.length);
      expect(comparable(summary.datasetFile)).toEqual(live.dataset);
      const after = llm.batchStats();
      // The batch of the killed worker was answered once; nothing of it was asked again.
      expect(Object.values(after.linesByCustomId).every((n) => n === 1)).toBe(true);
      expect(Object.keys(after.linesByCustomId)).toHaveLength(live.calls);
      expect(llm.requests.filter((r) => !r.batch)).toHaveLength(0);
      expect(fs.readdirSync(pendingDir)).toEqual([]);
    } finally {
      await llmWorker.stop();
      await others.shutdown();
      await native.close();
      await connection.close();
      await llm.close();
    }
  });
});
