/**
 * Test strength in the pipeline on the demo repository: the stability and mutation stages after
 * the coverage rounds, on the real Temporal server, the LLM client against scripted responses
 * over HTTP (test/fixtures/scripted-llm/demo-test-strength.json) and real containers.
 *
 * word_frequencies keeps the demo's strong tests; the tests of slugify and Interval.merge only
 * check that both implementations give a result of the same type. With a minimum score, each weak
 * record goes through a mutation round: slugify's answer compares the slugs and reaches the
 * minimum; Interval.merge's compares the bounds, kills more, and still falls short. collapse_spaces'
 * tests depend on the clock: the stability check rejects them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DatasetRecordSchema, RejectionSchema } from '../../activities/store/records';
import { loadLlmScript } from '../../scripts/scripted-llm/server';
import { loadPromptTemplate } from '../../activities/llm/prompts';
import { runCrawl } from '../../scripts/lib/crawl';
import { startTestFactory, type TestFactory } from '../support/factory';

const DEMO_REPO = path.resolve(__dirname, '../../scripts/demo/example-repo');
const FIXTURE = path.resolve(__dirname, '../fixtures/scripted-llm/demo-test-strength.json');
const MIN_SCORE = 0.75;

function readJsonl(file: string): unknown[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

describe('test strength: the stability check and mutation rounds in a crawl', () => {
  let factory: TestFactory;
  beforeAll(async () => {
    factory = await startTestFactory(loadLlmScript(FIXTURE), {
      loops: { mutation: { enabled: true, minScore: MIN_SCORE, rounds: 1 }, stability: { runs: 2 } },
    });
  });
  afterAll(async () => {
    await factory?.close();
  });

  it('scores every record, improves a weak one in a mutation round, rejects one that stays below the minimum and a flaky one', async () => {
    const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: [{ kind: 'local', path: DEMO_REPO, name: 'textkit' }], runId: 'it-strength' });
    expect(summary.functions).toBe(4);

    const rejections = readJsonl(path.join(summary.outDir, 'rejections.jsonl')).map((r) => RejectionSchema.parse(r));
    // The reasons, should a function end elsewhere than expected.
    expect(rejections.map((r) => `${r.qualname} ${r.stage}: ${r.reason}`).sort()).toEqual(['Interval.merge mutation', 'collapse_spaces stability'].map((x) => expect.stringContaining(x)));
    const records = readJsonl(summary.datasetFile).map((r) => DatasetRecordSchema.parse(r));
    const byName = Object.fromEntries(records.map((r) => [r.qualname, r]));
    expect(Object.keys(byName).sort()).toEqual(['slugify', 'word_frequencies']);
    for (const r of records) {
      // Every record carries its score, its counts and its stability verdict.
      expect(r.mutation_min_score).toBe(MIN_SCORE);
      expect(r.mutation_score).toBeGreaterThanOrEqual(MIN_SCORE);
      expect(r.mutants!.made).toBeGreaterThan(0);
      expect(r.mutants!.killed + r.mutants!.survived + r.mutants!.not_run).toBe(r.mutants!.made);
      expect(r.mutation_score).toBeCloseTo(r.mutants!.killed / (r.mutants!.killed + r.mutants!.survived), 10);
      expect(r.stability).toBe('stable');
      // Survivors are listed with their diffs for a person to judge.
      if (r.mutants!.survived > 0) expect(r.mutation_survivors).toMatch(/--- original\n\+\+\+ mutant\n@@ /);
      else expect(r.mutation_survivors).toBeNull();
    }

    // Strong tests: a high score without a round.
    const strong = byName.word_frequencies!;
    expect(strong.mutation_rounds).toBe(0);
    expect(strong.mutation_score).toBeGreaterThanOrEqual(0.9);

    // Weak tests (same type only), improved: the round's script compares the slugs and is kept.
    const improved = byName.slugify!;
    expect(improved.mutation_rounds).toBe(1);
    expect(improved.prompt_versions.mutation).toMatch(new RegExp(`^mutation@${loadPromptTemplate('mutation').version}\\b`));
    expect(improved.eval_script).toContain('assert slugify(text, **kwargs) == slugify_new_implementation(text, **kwargs)');
    expect(improved.eval_script).not.toContain('type(slugify(');
    expect(improved.coverage_rate).toBe(1);

    const rejected = Object.fromEntries(rejections.map((r) => [r.qualname, r]));
    expect(Object.keys(rejected).sort()).toEqual(['Interval.merge', 'collapse_spaces']);
    // collapse_spaces' tests pass with the machine's clock and fail once it moves a day: flaky, with the differing outcomes.
    expect(rejected.collapse_spaces).toMatchObject({ stage: 'stability', mutation_rounds: 0 });
    expect(rejected.collapse_spaces!.reason).toMatch(/^flaky: outcomes differ: run 1 \(.*\): passed; run 2 \(.*\): failed/);
    // Weak tests, not enough: the round's script kills more (it is kept) but equivalent mutants hold it below the minimum.
    const low = rejected['Interval.merge']!;
    expect(low).toMatchObject({ stage: 'mutation', mutation_rounds: 1 });
    const m = /^mutation score ([\d.]+): .*; below 0\.75 after 1 mutation round\(s\) \(([\d.]+) before them\)$/.exec(low.reason);
    expect(m).not.toBeNull();
    const [after, before] = [Number(m![1]), Number(m![2])];
    expect(before).toBeLessThan(MIN_SCORE);
    expect(after).toBeGreaterThan(before);
    expect(after).toBeLessThan(MIN_SCORE);
    expect(low.mutation_score).toBeCloseTo(after, 3);

    // One mutation prompt per weak record, each showing the surviving mutants as diffs.
    const asked = factory.llm.requests.filter((r) => r.kind === 'mutation');
    expect(asked.map((r) => r.functionName).sort()).toEqual(['Interval.merge', 'slugify']);
    for (const r of asked) {
      const user = r.messages[1]!.content;
      expect(user).toMatch(/SURVIVING CHANGES[\s\S]*--- original\n\+\+\+ mutant\n@@ /);
    }

    // summary.json: the distribution of the accepted records' scores, and the funnel's new stages.
    const file = JSON.parse(fs.readFileSync(path.join(summary.outDir, 'summary.json'), 'utf8'));
    expect(file.testStrength).toMatchObject({ scored: 2, unscored: 0, improvedByRounds: 1, mutationRounds: 1, stability: { stable: 2, flaky: 0, unchecked: 0 } });
    expect(file.testStrength.min).toBeGreaterThanOrEqual(MIN_SCORE);
    expect(file.testStrength.histogram.reduce((n: number, b: { records: number }) => n + b.records, 0)).toBe(2);
    expect(file.rejectedAt.mutation).toBe(1);
    expect(file.rejectedAt.stability).toBe(1);
    expect(file.funnel).toMatchObject({ coverage: 4, stability: 4, mutation: 3, ast_check: 2, accepted: 2 });

    // Each stage is an activity of its own in the function's history.
    const types = new Set<string>();
    for await (const wf of factory.client.workflow.list({ query: `RepostRunId = "it-strength" AND WorkflowType = "functionWorkflow"` })) {
      const history = await factory.client.workflow.getHandle(wf.workflowId).fetchHistory();
      for (const e of history.events ?? []) {
        const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
        if (name) types.add(name);
      }
    }
    expect([...types]).toEqual(expect.arrayContaining(['checkStability', 'scoreMutants', 'killMutants']));
  });

  it('keeps a flaky record, labelled, when the run asks for it; without the mutation stage no record is scored', async () => {
    const config = { ...factory.config, loops: { ...factory.config.loops, mutation: { ...factory.config.loops.mutation, enabled: false }, stability: { runs: 2, keepFlaky: true } } };
    const summary = await runCrawl({ config, client: factory.client, store: factory.store, sources: [{ kind: 'local', path: DEMO_REPO, name: 'textkit' }], runId: 'it-strength-keep' });
    const records = readJsonl(summary.datasetFile).map((r) => DatasetRecordSchema.parse(r));
    const byName = Object.fromEntries(records.map((r) => [r.qualname, r]));
    expect(Object.keys(byName).sort()).toEqual(['Interval.merge', 'collapse_spaces', 'slugify', 'word_frequencies']);
    expect(byName.collapse_spaces).toMatchObject({ stability: 'flaky', mutation_score: null, mutants: null, mutation_min_score: null });
    expect(byName.collapse_spaces!.stability_reason).toMatch(/^outcomes differ: run 1 \(.*\): passed; run 2 \(.*\): failed/);
    for (const name of ['Interval.merge', 'slugify', 'word_frequencies']) expect(byName[name]).toMatchObject({ stability: 'stable', stability_reason: null, mutation_score: null });
    const file = JSON.parse(fs.readFileSync(path.join(summary.outDir, 'summary.json'), 'utf8'));
    expect(file.testStrength).toMatchObject({ scored: 0, unscored: 4, stability: { stable: 3, flaky: 1, unchecked: 0 } });
  });
});
