/**
 * Crawls under real faults, on the real dev server, Docker and the scripted LLM server over HTTP:
 * a worker process killed with SIGKILL mid-crawl and another started, a function workflow that
 * fails (terminated), a duplicate workflow id, one LLM call in ten failing with 429/500/timeouts,
 * an answer slower than the heartbeat timeout, and a last code block without its closing fence.
 * Each crawl must end with the dataset an undisturbed crawl makes, every candidate recorded once.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { candidateIds } from '../../activities/dataset/run-files';
import { LocalStore } from '../../activities/store/local';
import { allRecords, type Store } from '../../activities/store/types';
import { runCrawl, startCrawl } from '../../scripts/lib/crawl';
import { loadLlmScript, startScriptedLlmServer, type LlmScript } from '../../scripts/scripted-llm/server';
import { acceptedQualnames } from '../support/fixtures';
import { functionWorkflowId } from '../../workflows/ids';
import { requireEnv, startTestFactory, testConfig, workerEnv, type TestFactory } from '../support/factory';
import { spawnWorker, waitFor } from '../support/processes';
import Docker from 'dockerode';

const DEMO_REPO = path.resolve(__dirname, '../../scripts/demo/example-repo');
const DEMO_SCRIPT = path.resolve(__dirname, '../../scripts/demo/scripted-llm-responses.json');
const demoSource = [{ kind: 'local' as const, path: DEMO_REPO, name: 'textkit' }];

/** What the demo repository's crawl gives when nothing goes wrong (see pipeline.test.ts). */
const EXPECTED_ACCEPTED = ['Interval.merge', 'slugify', 'word_frequencies'];

async function records(store: Store, runId: string) {
  const inRun = await candidateIds(store, runId);
  const all = [];
  for await (const r of allRecords(store, runId)) if (inRun.has(r.fn.functionId)) all.push(r);
  return { all, candidates: inRun };
}

/** A record as a dataset compares it: everything but the run it was made in. */
function comparable(r: { run_id: string }) {
  const { run_id: _r, ...rest } = r;
  return rest;
}

/** The demo script with one response of one step replaced. */
function demoScriptWith(kind: string, functionName: string, change: (text: string) => LlmScript['rules'][number]['responses'][number]): LlmScript {
  const script = loadLlmScript(DEMO_SCRIPT);
  const rule = script.rules.find((r) => r.kind === kind && r.functionName === functionName)!;
  rule.responses = [change(rule.responses[0] as string)];
  return script;
}

describe('a worker process killed with SIGKILL mid-crawl', () => {
  it('leaves the same dataset as an undisturbed crawl once another worker takes over, and nothing behind', async () => {
    // Scripted LLM responses, each answer taking a second, like a (fast) real endpoint.
    const llm = await startScriptedLlmServer(loadLlmScript(DEMO_SCRIPT), { latencyMs: Number(process.env.REPOST_CHAOS_ANSWER_DELAY_MS ?? 1000) });
    const connection = await Connection.connect({ address: requireEnv('REPOST_TEST_TEMPORAL_ADDRESS') });
    const client = new Client({ connection });
    const crawl = async (kill: boolean) => {
      // A lost activity is retried after the heartbeat timeout (30 s by default; shorter here to keep the test quick).
      const config = testConfig(llm.url, { temporal: { heartbeatTimeoutSec: Number(process.env.REPOST_CHAOS_HEARTBEAT_SEC ?? 10) } });
      const store = new LocalStore(config.dataDir);
      const first = spawnWorker(workerEnv(config));
      await first.ready;
      const runId = `chaos-kill-${kill ? 'disturbed' : 'calm'}-${Date.now().toString(36)}`;
      const startedAt = Date.now();
      const started = await startCrawl({ config, client, store, sources: demoSource, runId });
      let second = first;
      if (kill) {
        // Mid-crawl: some answers received, LLM calls and container runs in flight.
        const seen = llm.requests.length;
        await waitFor('the crawl to be under way', () => llm.requests.length >= seen + 6, 120_000);
        await first.kill9();
        second = spawnWorker(workerEnv(config));
        await second.ready;
      }
      const summary = await started.result();
      const seconds = (Date.now() - startedAt) / 1000;
      await second.stop();
      return { config, store, runId, summary, seconds, killed: first };
    };
    try {
      const calm = await crawl(false);
      const disturbed = await crawl(true);
      console.log(`crawl of the demo: ${calm.seconds.toFixed(1)} s undisturbed, ${disturbed.seconds.toFixed(1)} s with a worker killed mid-crawl`);

      expect(acceptedQualnames(calm.summary.datasetFile)).toEqual(EXPECTED_ACCEPTED);
      expect(acceptedQualnames(disturbed.summary.datasetFile)).toEqual(acceptedQualnames(calm.summary.datasetFile));
      const a = await records(calm.store, calm.runId);
      const b = await records(disturbed.store, disturbed.runId);
      // Every candidate has exactly one record.
      expect(b.all.map((r) => r.fn.functionId).sort()).toEqual([...b.candidates].sort());
      const byId = (rs: typeof a.all) => Object.fromEntries(rs.map((r) => [r.fn.functionId, r.accepted ? comparable(r.record) : r.rejection]));
      expect(byId(b.all)).toEqual(byId(a.all));

      // Nothing left behind: no container of the killed process, no half-written file.
      const docker = new Docker();
      const leftovers = await docker.listContainers({ all: true, filters: { label: [`dev.repost.sandbox.worker=${require('node:os').hostname()}-${disturbed.killed.child.pid}`] } });
      expect(leftovers).toEqual([]);
      const partial: string[] = [];
      const walk = (dir: string) => {
        for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
          const p = path.join(dir, e.name);
          if (/\.tmp$|\.tmp-/.test(e.name)) partial.push(p);
          else if (e.isDirectory() && e.name !== 'snapshots') walk(p);
        }
      };
      walk(disturbed.config.dataDir);
      expect(partial).toEqual([]);
    } finally {
      await connection.close();
      await llm.close();
    }
  });
});

describe('failures inside a crawl become recorded outcomes', () => {
  let factory: TestFactory;
  beforeAll(async () => {
    // Scripted answers, slowed down a little so a running function can be caught in the act.
    factory = await startTestFactory(loadLlmScript(DEMO_SCRIPT), {}, undefined, { latencyMs: 300 });
  });
  afterAll(async () => {
    await factory?.close();
  });

  it('a function workflow that fails is recorded as internal, and the crawl goes on and finalizes', async () => {
    const runId = `chaos-child-${Date.now().toString(36)}`;
    const started = await startCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: demoSource, runId });
    // Terminate slugify's workflow while it runs: its parent sees a failed child.
    const victim = await waitFor('slugify to be running', async () => {
      for await (const wf of factory.client.workflow.list({ query: `RepostRunId = "${runId}" AND RepostFunction = "textkit/normalize.py::slugify" AND ExecutionStatus = "Running"` })) return wf.workflowId;
      return undefined;
    });
    await factory.client.workflow.getHandle(victim).terminate('chaos test: the function workflow fails');
    const summary = await started.result();
    expect(summary.functions).toBe(4);
    expect(acceptedQualnames(summary.datasetFile)).toEqual(['Interval.merge', 'word_frequencies']);
    const rec = (await records(factory.store, runId)).all.find((r) => r.fn.qualname === 'slugify')!;
    expect(rec.accepted).toBe(false);
    if (!rec.accepted) {
      expect(rec.rejection.stage).toBe('internal');
      expect(rec.rejection.reason).toMatch(/terminated/i);
    }
    expect(summary.rejectedAt.internal).toBe(1);
  });

  it('a duplicate workflow id is recorded as internal, and the other functions are unaffected', async () => {
    const runId = `chaos-dup-${Date.now().toString(36)}`;
    // The id the crawl will give word_frequencies, taken first by a workflow no worker serves.
    const { prepareSources } = await import('../../scripts/lib/crawl');
    const [pinned] = await prepareSources(factory.store, demoSource);
    const { RepositoryAnalyzer } = await import('../../activities/analysis');
    const dir = (await factory.store.openSnapshot(pinned!.kind === 'local' ? pinned!.pinned!.repoId : '', pinned!.kind === 'local' ? pinned!.pinned!.commit : ''))!;
    const fnId = (await RepositoryAnalyzer.open(dir, { ...factory.config.analysis, contextTokenBudget: factory.config.analysis.contextTokenBudget.train, repoId: 'textkit', commit: pinned!.kind === 'local' ? pinned!.pinned!.commit : '' })).functions().find((f) => f.qualname === 'word_frequencies')!.id;
    const squatter = await factory.client.workflow.start('functionWorkflow', { workflowId: functionWorkflowId(runId, { repoId: 'textkit', qualname: 'word_frequencies', functionId: fnId }), taskQueue: `nobody-polls-${runId}`, args: [] });
    try {
      const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: demoSource, runId });
      expect(summary.functions).toBe(4);
      expect(acceptedQualnames(summary.datasetFile)).toEqual(['Interval.merge', 'slugify']);
      const rec = (await records(factory.store, runId)).all.find((r) => r.fn.qualname === 'word_frequencies')!;
      expect(rec.accepted).toBe(false);
      if (!rec.accepted) {
        expect(rec.rejection.stage).toBe('internal');
        expect(rec.rejection.reason).toMatch(/duplicate workflow id|already started/i);
      }
    } finally {
      await squatter.terminate();
    }
  });
});

describe('a flaky endpoint: one LLM call in ten fails with 429, 500 or a timeout', () => {
  it('accepts the same functions as with none', async () => {
    const factory = await startTestFactory(loadLlmScript(DEMO_SCRIPT), { llm: { timeoutSec: 3 } }, undefined, {
      injectFaults: { rate: 0.1, kinds: ['429', '500', 'timeout'], seed: 7, hangMs: 8000 },
    });
    try {
      const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: demoSource, runId: `chaos-flaky-${Date.now().toString(36)}` });
      expect(acceptedQualnames(summary.datasetFile)).toEqual(EXPECTED_ACCEPTED);
      const injected = factory.llm.requests.filter((r) => r.reply.startsWith('injected-'));
      expect(injected.length).toBeGreaterThanOrEqual(1);
    } finally {
      await factory.close();
    }
  });
});

describe('slow answers and unfenced code', () => {
  it('an answer slower than the heartbeat timeout but within llm.timeoutSec is waited for, not retried', async () => {
    // One scripted answer (slugify's tests) takes 8 s; activities time out after 4 s without a heartbeat.
    const script = demoScriptWith('tests', 'slugify', (text) => ({ fault: 'slow', delayMs: 8000, text }));
    const factory = await startTestFactory(script, { llm: { timeoutSec: 20 }, temporal: { heartbeatTimeoutSec: 4 } });
    try {
      const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: demoSource, runId: `chaos-slow-${Date.now().toString(36)}` });
      expect(acceptedQualnames(summary.datasetFile)).toEqual(EXPECTED_ACCEPTED);
      const asked = factory.llm.requests.filter((r) => r.kind === 'tests' && r.functionName === 'slugify');
      expect(asked).toHaveLength(1);
    } finally {
      await factory.close();
    }
  });

  it('a last code block without its closing fence, from an answer that stopped on its own, is used', async () => {
    const script = demoScriptWith('tests', 'Interval.merge', (text) => text.replace(/```\s*$/, ''));
    const factory = await startTestFactory(script);
    try {
      const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: demoSource, runId: `chaos-fence-${Date.now().toString(36)}` });
      expect(acceptedQualnames(summary.datasetFile)).toEqual(EXPECTED_ACCEPTED);
      // Used as it came: no regeneration was asked for.
      expect(factory.llm.requests.filter((r) => r.kind === 'tests' && r.functionName === 'Interval.merge')).toHaveLength(1);
    } finally {
      await factory.close();
    }
  });
});
