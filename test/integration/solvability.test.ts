/**
 * The solvability stage of evaluation records, on the real components: a small repository crawled
 * as an evaluation set through Temporal, the LLM client (scripted responses over HTTP: the fixture
 * test/fixtures/scripted-llm/solvability-netconf.json, not model output) and containers.
 *   - parse_port's tests also check the exception type for None, which its docstring never
 *     mentions; the implementations fail there, the judge says the prompt leaves it open, and the
 *     assertion is removed (or, with removal off, the record is rejected with the assertion named);
 *   - clamp_percent's docstring determines what its tests check; the implementations fail one, the
 *     judge says it is determined, and the record keeps every assertion;
 *   - scale has no docstring: one is written from the ground truth and recorded (or, with
 *     writing off, the record is left out of the split).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DatasetRecordSchema, RejectionSchema, type DatasetRecord } from '../../activities/store/records';
import { runCrawl } from '../../scripts/lib/crawl';
import { loadLlmScript } from '../../scripts/scripted-llm/server';
import { startTestFactory, type TestFactory } from '../support/factory';

const REPO = path.resolve(__dirname, '../fixtures/repos/netconf');
const SCRIPT = path.resolve(__dirname, '../fixtures/scripted-llm/solvability-netconf.json');
const NONE_ASSERTION = 'assert _outcome(lambda: parse_port(None)) == _outcome(lambda: parse_port_new_implementation(None))';

function readJsonl(file: string): unknown[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

describe('the solvability stage of evaluation records', () => {
  let factory: TestFactory;
  beforeAll(async () => {
    factory = await startTestFactory(loadLlmScript(SCRIPT), { workers: { sandboxConcurrency: 2 } });
  });
  afterAll(async () => {
    await factory?.close();
  });

  it('removes an assertion on an undocumented exception type, keeps assertions the docstring determines, and writes a missing docstring', async () => {
    const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: [{ kind: 'local', path: REPO, name: 'netconf', split: 'eval' }], runId: 'it-solvable' });
    expect(summary).toMatchObject({ functions: 3, accepted: 3, rejected: 0 });
    expect(summary.funnel.solvability).toBe(3);
    const records = readJsonl(summary.datasetFile).map((r) => DatasetRecordSchema.parse(r));
    const by = Object.fromEntries(records.map((r) => [r.qualname, r])) as Record<string, DatasetRecord>;

    // parse_port: every implementation failed at the None assertion only; judged open, it is gone,
    // the script passed again with the ground truth at full coverage, and all three now pass.
    const port = by.parse_port!;
    expect(port.eval_script).not.toContain('parse_port(None)');
    expect(port.eval_script).toContain('parse_port("70000")');
    expect(port.coverage_rate).toBe(1);
    expect(port.solve_rate).toBe(1);
    expect(port.solvability).toMatchObject({ samples: 3, passed: 3, passed_initially: 0, judged: 1, docstring: 'original', missing_docstring: 'generate' });
    expect(port.solvability!.removed_assertions).toEqual([{ line: expect.any(Number), text: NONE_ASSERTION }]);
    expect(port.prompt_versions).toMatchObject({ solve: 'solve@2', check_assertion: 'check_assertion@1' });

    // clamp_percent: the implementations forget the upper bound, which the docstring states: kept.
    const clamp = by.clamp_percent!;
    expect(clamp.eval_script).toContain('assert clamp_percent(150) == clamp_percent_new_implementation(150)');
    expect((clamp.eval_script.match(/^\s*assert /gm) ?? []).length).toBe(4);
    expect(clamp.solve_rate).toBe(0);
    expect(clamp.solvability).toMatchObject({ samples: 3, passed: 0, passed_initially: 0, judged: 1, removed_assertions: [] });

    // scale: no docstring; one was written from the ground truth, shown in the prompt, and recorded.
    const scale = by.scale!;
    expect(scale.generated_docstring).toBe('Each number of `values` multiplied by `factor`, as a new list in the same order; `values` itself is left unchanged.');
    expect(scale.solvability).toMatchObject({ docstring: 'generated', samples: 3, passed: 3, judged: 0 });
    expect(scale.solve_rate).toBe(1);
    const scaleSolve = factory.llm.requests.filter((r) => r.kind === 'solve' && r.functionName === 'scale');
    expect(scaleSolve).toHaveLength(3);
    expect(scaleSolve[0]!.messages[1]!.content).toContain('Each number of `values` multiplied by `factor`');

    // The judge saw the assertion, the prompt's code, the test around it and what the runs ran into.
    const judged = factory.llm.requests.filter((r) => r.kind === 'check_assertion');
    expect(judged.map((r) => r.functionName).sort()).toEqual(['clamp_percent', 'parse_port']);
    const portJudge = judged.find((r) => r.functionName === 'parse_port')!.messages[1]!.content;
    expect(portJudge).toContain(NONE_ASSERTION);
    expect(portJudge).toContain('def test_parse_port():');
    expect(portJudge).toContain('Raises ValueError when the number is outside 1..65535.');
    expect(portJudge).toContain('AssertionError');

    // Each step is an activity in the function's history, one per round.
    const ids: string[] = [];
    for await (const wf of factory.client.workflow.list({ query: `RepostRunId = "it-solvable" AND WorkflowType = "functionWorkflow"` })) ids.push(wf.workflowId);
    const portId = ids.find((id) => id.includes('/parse_port/'))!;
    const history = await factory.client.workflow.getHandle(portId).fetchHistory();
    const steps = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n): n is string => !!n);
    const after = steps.slice(steps.indexOf('checkTests') + 1);
    expect(after.sort()).toEqual(
      ['solvabilityTask', 'prepareEvalPrompt', ...Array(3).fill('sampleCandidate'), ...Array(6).fill('runCandidate'), 'failingAssertions', 'judgeAssertion', 'removeAssertions', 'executeScript', 'writeRecord'].sort(),
    );

    // summary.json and report.html show the solve rates and the assertions removed.
    const saved = JSON.parse(fs.readFileSync(path.join(summary.outDir, 'summary.json'), 'utf8'));
    expect(saved.solvability).toMatchObject({ checked: 3, removedAssertions: 1, recordsWithRemovals: 1, generatedDocstrings: 1, rejected: 0 });
    expect(saved.solvability.solveRates).toEqual({ '0': 1, '1': 2 });
    const report = fs.readFileSync(summary.reportFile, 'utf8');
    expect(report).toContain('id="solvability"');
    expect(report).toContain('assertions removed as unspecified');
  });

  it('with removal and writing off, rejects the record at stage solvability naming the assertion, and leaves a function without a docstring out', async () => {
    const solvability = { ...factory.config.loops.solvability, removeUndetermined: false, generateDocstrings: false };
    const config = { ...factory.config, loops: { ...factory.config.loops, solvability } };
    const summary = await runCrawl({ config, client: factory.client, store: factory.store, sources: [{ kind: 'local', path: REPO, name: 'netconf', split: 'eval' }], runId: 'it-strict' });
    expect(summary).toMatchObject({ functions: 3, accepted: 1, rejected: 2 });
    expect(summary.rejectedAt.solvability).toBe(2);
    const rejections = readJsonl(path.join(summary.outDir, 'rejections.jsonl')).map((r) => RejectionSchema.parse(r));
    const port = rejections.find((r) => r.qualname === 'parse_port')!;
    expect(port.stage).toBe('solvability');
    expect(port.reason).toMatch(/^asserts behaviour its prompt does not determine: line \d+ `assert _outcome\(lambda: parse_port\(None\)\)/);
    const scale = rejections.find((r) => r.qualname === 'scale')!;
    expect(scale).toMatchObject({ stage: 'solvability' });
    expect(scale.reason).toMatch(/^no docstring/);
    const [clamp] = readJsonl(summary.datasetFile).map((r) => DatasetRecordSchema.parse(r));
    expect(clamp!.qualname).toBe('clamp_percent');
    expect(clamp!.solvability).toMatchObject({ missing_docstring: 'exclude', removed_assertions: [] });
  });
});
