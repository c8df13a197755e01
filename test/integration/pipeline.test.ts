/**
 * The pipeline end to end on the real components: the demo repository through the crawl,
 * repository and function workflows on the Temporal dev server, the LLM steps through the real
 * `openai` client against scripted responses over HTTP, and every script run in a real container.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { promisify } from 'node:util';
import * as path from 'node:path';
import { DatasetRecordSchema, RejectionSchema } from '../../activities/store/records';
import { loadLlmScript, type LlmScript } from '../../scripts/scripted-llm/server';
import { runCrawl, startCrawl } from '../../scripts/lib/crawl';
import { replayRejected } from '../../scripts/lib/replay';
import { Worker } from '@temporalio/worker';
import { requireEnv, startTestFactory, type TestFactory } from '../support/factory';

const DEMO_REPO = path.resolve(__dirname, '../../scripts/demo/example-repo');
const DEMO_SCRIPT = path.resolve(__dirname, '../../scripts/demo/scripted-llm-responses.json');

function readJsonl(file: string): unknown[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

describe('the demo crawl through Temporal, the LLM client and containers', () => {
  let factory: TestFactory;
  beforeAll(async () => {
    factory = await startTestFactory(loadLlmScript(DEMO_SCRIPT));
  });
  afterAll(async () => {
    await factory?.close();
  });

  it('accepts, rejects and records every function with its rounds', async () => {
    const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: [{ kind: 'local', path: DEMO_REPO, name: 'textkit' }], runId: 'it-demo' });
    expect(summary.functions).toBe(4);
    expect(summary.accepted).toBe(3);
    expect(summary.rejected).toBe(1);
    expect(summary.funnel.accepted + summary.rejected).toBe(summary.functions);
    // Token accounting for the run, per repository and per step, from the recorded exchanges.
    const usage = JSON.parse(fs.readFileSync(path.join(summary.outDir, 'summary.json'), 'utf8')).llm;
    expect(usage.total.calls).toBe(factory.llm.requests.length);
    expect(usage.total.cachedCalls).toBe(0);
    expect(usage.total.promptTokens).toBeGreaterThan(1000);
    expect(usage.byRepo.textkit.calls).toBe(usage.total.calls);
    expect(usage.byStep.debug.calls).toBe(1);
    expect(usage.byStep.coverage.calls).toBe(1);
    // word_frequencies' first tests answer reaches both implementations only through a helper:
    // RepoST's literal rule (the default) refuses it once, and the run says what that cost.
    const regenerations = JSON.parse(fs.readFileSync(path.join(summary.outDir, 'summary.json'), 'utf8')).regenerations;
    expect(regenerations).toMatchObject({
      calls: 1,
      byCheck: { test_calls_target: { calls: 1 }, test_calls_new_implementation: { calls: 1 } },
      byStep: { tests: { calls: 1, reviewed: 5 }, sandbox: { calls: 0 }, debug: { calls: 0 }, coverage: { calls: 0 } },
    });
    expect(regenerations.promptTokens).toBeGreaterThan(100);
    // The funnel counts all four as reaching debug; one function had a debug round, one a coverage round.
    const file = JSON.parse(fs.readFileSync(path.join(summary.outDir, 'summary.json'), 'utf8'));
    expect(file.funnel.debug).toBe(4);
    expect(file.rounds).toEqual({ debug: { functions: 1, rounds: 1 }, coverage: { functions: 1, rounds: 1 } });
    expect(usage.byStep.tests.calls).toBe(5);

    const records = readJsonl(summary.datasetFile).map((r) => DatasetRecordSchema.parse(r));
    const byName = Object.fromEntries(records.map((r) => [r.qualname, r]));
    expect(Object.keys(byName).sort()).toEqual(['Interval.merge', 'slugify', 'word_frequencies']);

    // slugify: cross-file context (aggregate prompt), the first tests hit a NameError, one debug round fixes it.
    expect(byName.slugify!.debug_rounds).toBe(1);
    expect(byName.slugify!.prompt_versions.sandbox).toMatch(/^aggregate@/);
    expect(byName.slugify!.orig_context).toContain('## textkit/clean.py');
    // word_frequencies: the first tests miss branches, one coverage round reaches full coverage;
    // a renamed local variable makes the AST check fail and the LLM check decide.
    expect(byName.word_frequencies!.coverage_rounds).toBe(1);
    expect(byName.word_frequencies!.sandbox_ast_check).toBe(false);
    expect(byName.word_frequencies!.sandbox_functionality_check).toBe('same');
    expect(byName.word_frequencies!.prompt_versions.tests).toMatch(/\+follow-up@/);
    for (const r of records) {
      expect(r.coverage_rate).toBe(1);
      expect(r.test_correctness_check).toBe('yes');
      expect(r.eval_script).toContain(`def test_${r.func_name.split('.').pop()}(`);
      // RepoST's own format: a method is named with its class.
      expect(r.func_name).toBe(r.qualname);
      expect(r.commit_id).toMatch(/^(tree-)?[0-9a-f]{32,40}$/);
      // Every exchange of the function is recorded and indexed by its id.
      const exchanges = await factory.store.listExchanges(r.function_id);
      expect(exchanges.length).toBeGreaterThanOrEqual(3);
    }
    expect(byName['Interval.merge']!.sandbox_ast_check).toBe(true);
    // A local folder's license comes from its license file.
    for (const r of records) expect(r).toMatchObject({ license: 'mit', license_source: 'file:LICENSE' });

    const rejections = readJsonl(path.join(summary.outDir, 'rejections.jsonl')).map((r) => RejectionSchema.parse(r));
    expect(rejections).toHaveLength(1);
    expect(rejections[0]!).toMatchObject({ qualname: 'collapse_spaces', stage: 'test_check' });
    expect(rejections[0]!.reason).toContain('too weak');

    // The workflows are in Temporal's history, searchable by run id.
    const listed: string[] = [];
    for await (const wf of factory.client.workflow.list({ query: `RepostRunId = "it-demo"` })) listed.push(wf.workflowId);
    expect(listed).toEqual(expect.arrayContaining(['it-demo/crawl', 'it-demo/repo/0']));
    // Function workflows show the repository and the qualified name: `it-demo/fn/textkit/slugify/<function id>`.
    expect(listed.filter((id) => id.startsWith('it-demo/fn/')).map((id) => id.replace(/\/[0-9a-f]{16}$/, '')).sort()).toEqual(
      ['Interval.merge', 'collapse_spaces', 'slugify', 'word_frequencies'].map((q) => `it-demo/fn/textkit/${q}`),
    );
  });

  it("writes RepoST's own format: every accepted record passes RepoST-style ground-truth runs with its recorded coverage", async () => {
    const dataset = path.join(factory.dataDir, 'runs', 'it-demo', 'dataset.jsonl');
    const { stdout } = await promisify(execFile)(process.execPath, ['-r', 'tsx/cjs', 'scripts/sandbox.ts', 'batch', dataset, '--ground-truth', '--json'], {
      cwd: path.resolve(__dirname, '../..'),
      env: { ...process.env, REPOST_DATA_DIR: factory.dataDir, REPOST_SANDBOX_IMAGE: requireEnv('REPOST_TEST_SANDBOX_IMAGE') },
      maxBuffer: 64 * 1024 * 1024,
    });
    const { summary, outcomes } = JSON.parse(stdout) as { summary: { records: number; passed: number; coverageMatches: number }; outcomes: { funcName: string; result: { status: string } }[] };
    expect(summary).toMatchObject({ records: 3, passed: 3, coverageMatches: 3 });
    expect(outcomes.map((o) => o.funcName).sort()).toEqual(['Interval.merge', 'slugify', 'word_frequencies']);
  });

  it('replays a rejected function: its record is replaced, not duplicated, and cached answers cost nothing', async () => {
    const before = factory.llm.requests.length;
    const { outcomes, summary } = await replayRejected({ config: factory.config, client: factory.client, store: factory.store, runId: 'it-demo', filter: { stages: ['test_check'] } });
    expect(outcomes.map((o) => o.qualname)).toEqual(['collapse_spaces']);
    expect(outcomes[0]!.stage).toBe('test_check');
    expect(factory.llm.requests.length).toBe(before);
    expect(summary.functions).toBe(4);
    expect(summary.rejected).toBe(1);
    const ids: string[] = [];
    for await (const wf of factory.client.workflow.list({ query: `RepostRunId = "it-demo" AND WorkflowType = "functionWorkflow"` })) ids.push(wf.workflowId);
    expect(ids.filter((id) => id.includes('/replay-'))).toHaveLength(1);
  });

  it('refuses a taken run id or output folder; --resume continues the run without running recorded functions again', async () => {
    const sources = [{ kind: 'local' as const, path: DEMO_REPO, name: 'textkit' }];
    const base = { config: factory.config, client: factory.client, store: factory.store, sources };
    await expect(startCrawl({ ...base, runId: 'it-demo' })).rejects.toThrow(/run it-demo already exists .*--resume/);
    await expect(startCrawl({ ...base, runId: 'it-other', outDir: path.join(factory.dataDir, 'runs', 'it-demo') })).rejects.toThrow(/holds the files of run it-demo/);
    const before = factory.llm.requests.length;
    const summary = await runCrawl({ ...base, runId: 'it-demo', resume: true });
    expect(factory.llm.requests.length).toBe(before);
    expect(summary).toMatchObject({ functions: 4, accepted: 3, rejected: 1 });
    expect((await factory.store.getRun('it-demo'))?.resumed).toBe(1);
  });

  it('the workflow code replays deterministically against the recorded histories', async () => {
    const ids = ['it-demo/crawl', 'it-demo/repo/0'];
    for await (const wf of factory.client.workflow.list({ query: `RepostRunId = "it-demo" AND WorkflowType = "functionWorkflow"` })) ids.push(wf.workflowId);
    const priorities = new Map<string, Set<number>>();
    for (const id of ids) {
      const history = await factory.client.workflow.getHandle(id).fetchHistory();
      await Worker.runReplayHistory({ workflowBundle: { code: fs.readFileSync(requireEnv('REPOST_TEST_WORKFLOW_BUNDLE'), 'utf8') } }, history, id);
      for (const e of history.events ?? []) {
        const a = e.activityTaskScheduledEventAttributes;
        if (a?.activityType?.name) priorities.set(a.activityType.name, (priorities.get(a.activityType.name) ?? new Set()).add(a.priority?.priorityKey ?? 0));
      }
    }
    // Later stages go first on their task queues: a new function's first call last, the checks first.
    expect([...priorities.get('generateSandboxScript')!]).toEqual([5]);
    expect([...priorities.get('checkTests')!]).toEqual([1]);
    expect([...priorities.get('debugScript')!]).toEqual([3]);
    expect(ids.length).toBeGreaterThanOrEqual(6);
  });

  it('a crawl continues as new past its window and still sees every repository', async () => {
    const config = { ...factory.config, crawl: { ...factory.config.crawl, continueAsNewAfter: 1 } };
    const sources = [
      { kind: 'local' as const, path: DEMO_REPO, name: 'textkit' },
      { kind: 'local' as const, path: DEMO_REPO, name: 'textkit-copy' },
    ];
    const summary = await runCrawl({ config, client: factory.client, store: factory.store, sources, runId: 'it-can' });
    expect(summary.repositories).toBe(2);
    expect(summary.functions).toBe(8);
    expect(summary.accepted).toBe(6);
    // One execution per page of sources: the crawl continued as new once.
    let executions = 0;
    for await (const wf of factory.client.workflow.list({ query: `WorkflowId = "it-can/crawl"` })) executions += wf.workflowId === 'it-can/crawl' ? 1 : 0;
    expect(executions).toBe(2);
  });

  it('re-running unchanged work costs no tokens and neither duplicates nor loses a record', async () => {
    const before = factory.llm.requests.length;
    const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: [{ kind: 'local', path: DEMO_REPO, name: 'textkit' }], runId: 'it-demo-again' });
    const outDir = summary.outDir;
    expect(factory.llm.requests.length).toBe(before);
    expect(summary.functions).toBe(4);
    expect(summary.accepted).toBe(3);
    expect(readJsonl(summary.datasetFile)).toHaveLength(3);
    const usage = JSON.parse(fs.readFileSync(path.join(outDir, 'summary.json'), 'utf8')).llm;
    expect(usage.total.calls).toBeGreaterThan(0);
    expect(usage.total.cachedCalls).toBe(usage.total.calls);
    expect(usage.total.promptTokens + usage.total.completionTokens).toBe(0);
  });

  it('with crawl.checkLocalLicenses a local folder without a license of crawl.github.licenses is skipped with the reason', async () => {
    const config = { ...factory.config, crawl: { ...factory.config.crawl, checkLocalLicenses: true } };
    const unlicensed = path.resolve(__dirname, '../fixtures/repos/scripts_repo');
    const before = factory.llm.requests.length;
    const summary = await runCrawl({
      config,
      client: factory.client,
      store: factory.store,
      sources: [
        { kind: 'local', path: DEMO_REPO, name: 'textkit' },
        { kind: 'local', path: unlicensed, name: 'scripts_repo' },
      ],
      runId: 'it-licenses',
    });
    expect(summary).toMatchObject({ repositories: 2, functions: 4, accepted: 3 });
    const file = JSON.parse(fs.readFileSync(path.join(summary.outDir, 'summary.json'), 'utf8')) as { skippedRepos: { source: { path: string }; reason: string }[] };
    expect(file.skippedRepos).toEqual([{ source: expect.objectContaining({ path: unlicensed }), reason: 'license: none found in a license file, not one of crawl.github.licenses (mit)' }]);
    // The demo's answers come from the cache.
    expect(factory.llm.requests.length).toBe(before);
  });

  it('with loops.sanity.testCalls=reachable the helper-based tests answer is accepted at once', async () => {
    const config = { ...factory.config, loops: { ...factory.config.loops, sanity: { testCalls: 'reachable' as const } } };
    const summary = await runCrawl({ config, client: factory.client, store: factory.store, sources: [{ kind: 'local', path: DEMO_REPO, name: 'textkit' }], runId: 'it-demo-reachable' });
    expect(summary).toMatchObject({ functions: 4, accepted: 3, rejected: 1 });
    const file = JSON.parse(fs.readFileSync(path.join(summary.outDir, 'summary.json'), 'utf8'));
    // The first answers come from the cache, reviewed under the run's own rule: none is refused.
    expect(file.regenerations).toMatchObject({ calls: 0, byStep: { tests: { calls: 0, reviewed: 4 } } });
    expect(file.llm.byStep.tests.calls).toBe(4);
    const wf = readJsonl(summary.datasetFile).map((r) => DatasetRecordSchema.parse(r)).find((r) => r.qualname === 'word_frequencies')!;
    expect(wf.prompt_versions.tests).not.toMatch(/follow-up/);
  });
});

describe('bad LLM answers and failures end as recorded rejections', () => {
  let factory: TestFactory;
  // Scripted LLM responses: garbled answers and a refused request.
  const script: LlmScript = {
    rules: [
      // No code block at all, every time: regenerated, then rejected at the sandbox stage.
      { kind: 'sandbox', functionName: 'word_frequencies', responses: ['I would rather not write code today.'] },
      // An HTTP 400 is not retried: the function ends rejected with the reason.
      { kind: 'sandbox', functionName: 'Interval.merge', responses: [{ fault: '400' }] },
      { functionName: 'collapse_spaces', responses: ['```python\nprint("abbreviated")\n# ... rest unchanged\n```'] },
      { kind: 'aggregate', functionName: 'slugify', responses: ['```python\ndef slugify(:\n```'] },
    ],
  };
  beforeAll(async () => {
    factory = await startTestFactory(script, { loops: { regenerateAttempts: 1 } });
  });
  afterAll(async () => {
    await factory?.close();
  });

  it('rejects each function at the sandbox stage with a reason, and the run completes', async () => {
    const started = await startCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: [{ kind: 'local', path: DEMO_REPO, name: 'textkit' }, { kind: 'local', path: '/nonexistent/repo' }], runId: 'it-bad' });
    const summary = await started.result();
    expect(summary.functions).toBe(4);
    expect(summary.accepted).toBe(0);
    expect(summary.repositories).toBe(2);
    const rejections = readJsonl(path.join(summary.outDir, 'rejections.jsonl')).map((r) => RejectionSchema.parse(r));
    const reason = Object.fromEntries(rejections.map((r) => [r.qualname, r]));
    for (const r of rejections) expect(r.stage).toBe('sandbox');
    expect(reason.word_frequencies!.reason).toMatch(/^parse_no_code_block/);
    expect(reason['Interval.merge']!.reason).toMatch(/LlmPermanentError/);
    expect(reason.collapse_spaces!.reason).toMatch(/^parse_abbreviated/);
    expect(reason.slugify!.reason).toMatch(/sanity_check/);
    // Regeneration asked twice (attempts 0 and 1) for the garbled answers; the 400 was asked once.
    const asked = (name: string) => factory.llm.requests.filter((q) => q.functionName === name).length;
    expect(asked('word_frequencies')).toBe(2);
    expect(asked('Interval.merge')).toBe(1);
    const saved = JSON.parse(fs.readFileSync(path.join(summary.outDir, 'summary.json'), 'utf8'));
    expect(saved.skippedRepos).toHaveLength(1);
    expect(saved.skippedRepos[0].reason).toMatch(/not a directory/);
  });
});
