/**
 * The solvability stage cannot hollow a record out, on the real components (Temporal, the LLM
 * client over HTTP with scripted responses: the fixture
 * test/fixtures/scripted-llm/solvability-buckets.json, not model output, and containers).
 * `bucket`'s tests also check the class of 10, which its docstring leaves open; the scripted
 * implementations fail there and the judge says the prompt leaves it open. Without that assertion
 * the boundary mutants survive:
 *   - with the mutation stage on and an evaluation minimum of 1, the tests score 1 before the
 *     stage and are scored again after the removal: below the minimum, the record is rejected at
 *     stage solvability, the assertion named;
 *   - with the mutation stage off, the removal stands (the guard is the minimum, not a change of
 *     what the stage does otherwise).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DatasetRecordSchema, RejectionSchema } from '../../activities/store/records';
import { runCrawl } from '../../scripts/lib/crawl';
import { loadLlmScript } from '../../scripts/scripted-llm/server';
import { startTestFactory, type TestFactory } from '../support/factory';

const REPO = path.resolve(__dirname, '../fixtures/repos/buckets');
const SCRIPT = path.resolve(__dirname, '../fixtures/scripted-llm/solvability-buckets.json');
const BOUNDARY = 'assert bucket(10) == bucket_new_implementation(10)';

function readJsonl(file: string): unknown[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
}

describe('the solvability stage keeps a record’s tests strong', () => {
  let factory: TestFactory;
  beforeAll(async () => {
    factory = await startTestFactory(loadLlmScript(SCRIPT), { workers: { sandboxConcurrency: 2 } });
  });
  afterAll(async () => {
    await factory?.close();
  });

  const crawl = (runId: string, mutation: boolean) => {
    const loops = { ...factory.config.loops, mutation: { ...factory.config.loops.mutation, enabled: mutation, minScore: { ...factory.config.loops.mutation.minScore, eval: 1 }, rounds: 0 } };
    return runCrawl({ config: { ...factory.config, loops }, client: factory.client, store: factory.store, sources: [{ kind: 'local', path: REPO, name: 'buckets', split: 'eval' }], runId });
  };

  it('rejects a record whose removal would leave its tests below the minimum mutation score', async () => {
    const summary = await crawl('it-hollow', true);
    expect(summary).toMatchObject({ functions: 1, accepted: 0, rejected: 1 });
    expect(summary.rejectedAt.solvability).toBe(1);
    const [rejection] = readJsonl(path.join(summary.outDir, 'rejections.jsonl')).map((r) => RejectionSchema.parse(r));
    expect(rejection!.qualname).toBe('bucket');
    expect(rejection!.stage).toBe('solvability');
    expect(rejection!.reason).toMatch(/^asserts behaviour its prompt does not determine, and without it the tests fall below the minimum mutation score 1 \(/);
    expect(rejection!.reason).toContain(BOUNDARY);

    // The tests were scored twice: by the mutation stage (1, at the minimum) and after the removal.
    const ids: string[] = [];
    for await (const wf of factory.client.workflow.list({ query: `RepostRunId = "it-hollow" AND WorkflowType = "functionWorkflow"` })) ids.push(wf.workflowId);
    const history = await factory.client.workflow.getHandle(ids[0]!).fetchHistory();
    const steps = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n): n is string => !!n);
    expect(steps.filter((s) => s === 'scoreMutants')).toHaveLength(2);
    expect(steps.indexOf('removeAssertions')).toBeLessThan(steps.lastIndexOf('scoreMutants'));
  });

  it('with the mutation stage off, the same removal stands', async () => {
    const summary = await crawl('it-hollow-off', false);
    expect(summary).toMatchObject({ functions: 1, accepted: 1, rejected: 0 });
    const [record] = readJsonl(summary.datasetFile).map((r) => DatasetRecordSchema.parse(r));
    expect(record!.eval_script).not.toContain(BOUNDARY);
    expect(record!.solvability!.removed_assertions).toEqual([{ line: expect.any(Number), text: BOUNDARY }]);
    expect(record!.solve_rate).toBe(1);
  });
});
