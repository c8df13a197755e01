import { DEFAULT_MUTATION_SETTINGS, leftOutComparison, mutationDistribution, mutationSpec, summarizeMutation, survivorsText, type MutationSummary } from '../../../activities/sandbox/mutation';
import { SandboxResultSchema, type MutantResult, type SandboxResult } from '../../../activities/sandbox/schema';
import { mutationLine } from '../../../activities/sandbox-activities';

const mutant = (operator: string, outcome: MutantResult['outcome'], line = 2): MutantResult => ({
  operator,
  line,
  diff: `--- original\n+++ mutant\n@@ -${line} +${line} @@\n-    a\n+    b (${operator})`,
  outcome,
  kind: outcome === 'killed' ? 'AssertionError' : outcome === 'timeout' ? 'timeout' : null,
  ms: 10,
});

function result(status: SandboxResult['status'], mutants: MutantResult[] | null, leftOut?: Record<string, number>): SandboxResult {
  return SandboxResultSchema.parse({
    status, exitCode: status === 'passed' ? 0 : 1, durationMs: 100, stdout: '', stderr: '', truncated: false, exception: null, coverage: null, packages: [],
    notes: status === 'passed' ? [] : ['the script failed'],
    mutation: mutants === null ? null : {
      target: 'f_new_implementation', mode: 'warm', candidates: 40, examined: mutants.length, duplicates: 0, invalid: 0,
      controlMs: 30, mutantTimeoutSec: 2.3, budgetSec: 600, warmStarts: 1, mutants, notes: [], ...(leftOut ? { leftOut } : {}),
    },
  });
}

const summary = (status: MutationSummary['status'], score: number | null, counts: Partial<MutationSummary> = {}): MutationSummary => ({
  status, score, made: 10, killed: 0, survived: 0, timedOut: 0, notRun: 0, groundTruth: status === 'ground_truth_failed' ? 'failed' : 'passed',
  candidates: 10, leftOut: {}, scoreWithLeftOut: score, byOperator: {}, mode: 'warm', controlMs: 1, mutantTimeoutSec: 1, notes: [], ...counts,
});

describe('mutation scores', () => {
  test('the spec names the placed copy and derives the budget from the run limit unless given', () => {
    expect(mutationSpec('Angle.zero', {}, 120)).toEqual({ target: 'Angle.zero_new_implementation', cap: 30, seed: 0, mutantTimeoutSec: null, budgetSec: 600 });
    expect(mutationSpec('f', { cap: 5, seed: 9, mutantTimeoutSec: 1, budgetSec: 30 }, 120)).toEqual({ target: 'f_new_implementation', cap: 5, seed: 9, mutantTimeoutSec: 1, budgetSec: 30 });
    expect(DEFAULT_MUTATION_SETTINGS.cap).toBe(30);
  });

  test('killed includes the timed-out ones, counted apart; the score is killed over the mutants that ran; per operator too', () => {
    const { summary: s, survivors } = summarizeMutation(
      result('passed', [mutant('constant', 'killed'), mutant('constant', 'survived', 3), mutant('statement', 'timeout'), mutant('return', 'killed'), mutant('boundary', 'not_run')]),
    );
    expect(s).toMatchObject({ status: 'scored', made: 5, killed: 3, survived: 1, timedOut: 1, notRun: 1, score: 0.75, groundTruth: 'passed', candidates: 40, mode: 'warm' });
    expect(s.byOperator).toEqual({ constant: { made: 2, killed: 1 }, statement: { made: 1, killed: 1 }, return: { made: 1, killed: 1 }, boundary: { made: 1, killed: 0 } });
    expect(survivors).toEqual([{ operator: 'constant', line: 3, diff: expect.stringContaining('+    b (constant)') }]);
  });

  test('the mutants left out (no allowed test can see them) are counted by reason, never scored; an older report has none', () => {
    const { summary: s } = summarizeMutation(result('passed', [mutant('constant', 'killed'), mutant('constant', 'survived')], { output: 12, message: 2, equivalent: 1 }));
    expect(s).toMatchObject({ status: 'scored', made: 2, score: 0.5, leftOut: { output: 12, message: 2, equivalent: 1 } });
    expect(mutationLine(s)).toBe('mutation score 0.500: 1 of 2 mutants killed (0 by a timeout), 1 survived; left out as no allowed test can see them: 12 output, 2 message, 1 equivalent');
    expect(summarizeMutation(result('passed', [mutant('constant', 'killed')])).summary.leftOut).toEqual({});
    const d = mutationDistribution([s, { ...s, leftOut: { output: 1 } }]);
    expect(d.leftOut).toEqual({ output: 13, message: 2, equivalent: 1 });
  });

  test('a mutant made only to measure the rules (tagged leftOut) is never scored; it counts in the score with the left-out ones', () => {
    const tagged = { ...mutant('constant', 'survived'), leftOut: 'output' };
    const { summary: s, survivors } = summarizeMutation(result('passed', [mutant('constant', 'killed'), tagged, { ...tagged, leftOut: 'message' }, mutant('return', 'killed')], { output: 1, message: 1 }));
    expect(s).toMatchObject({ status: 'scored', made: 2, killed: 2, survived: 0, score: 1, scoreWithLeftOut: 0.5 });
    expect(survivors).toEqual([]);
    expect(summarizeMutation(result('passed', [mutant('constant', 'killed'), mutant('constant', 'survived')])).summary.scoreWithLeftOut).toBe(0.5);
  });

  test('the comparison prints the scores before and after leaving the mutants out side by side', () => {
    const c = leftOutComparison([
      summary('scored', 1, { scoreWithLeftOut: 0.6, leftOut: { output: 12 } }),
      summary('scored', 0.9, { scoreWithLeftOut: 0.8, leftOut: { output: 1, message: 2 } }),
      summary('no_mutants', null, { scoreWithLeftOut: 0, leftOut: { output: 3 } }),
      summary('ground_truth_failed', null, { scoreWithLeftOut: null }),
    ]);
    expect(c.before).toMatchObject({ scored: 3, min: 0, max: 0.8, perfect: 0 });
    expect(c.before.mean).toBeCloseTo(1.4 / 3);
    expect(c.after).toMatchObject({ scored: 2, mean: 0.95, min: 0.9, perfect: 1 });
    const rows = c.text.split('\n');
    expect(rows[0]).toMatch(/^\s+before\s+after$/);
    expect(rows).toContain(`${'records scored'.padEnd(16)}         3         2`);
    expect(rows).toContain(`${'mean'.padEnd(16)}     0.467     0.950`);
    expect(rows).toContain(`${'score 1.0'.padEnd(16)}         0         1`);
    expect(rows.at(-1)).toBe('left out: 16 output, 2 message');
  });

  test('no score without a passing ground truth or without a mutant that ran', () => {
    expect(summarizeMutation(result('failed', [mutant('constant', 'not_run')])).summary).toMatchObject({ status: 'ground_truth_failed', score: null, groundTruth: 'failed', notRun: 1 });
    expect(summarizeMutation(result('error', null)).summary).toMatchObject({ status: 'ground_truth_failed', made: 0, notes: ['the script failed'] });
    expect(summarizeMutation(result('passed', [])).summary).toMatchObject({ status: 'no_mutants', score: null, made: 0 });
    expect(summarizeMutation(result('passed', [mutant('constant', 'not_run')])).summary).toMatchObject({ status: 'no_mutants', score: null, made: 1, notRun: 1 });
  });

  test('the survivors text lists each diff for a person to judge', () => {
    const text = survivorsText('Angle.zero', [{ operator: 'boundary', line: 4, diff: '-    if x < 0:\n+    if x <= 0:' }]);
    expect(text).toContain('# Angle.zero: 1 surviving mutant(s)');
    expect(text).toContain('## 1. boundary, line 4\n\n-    if x < 0:\n+    if x <= 0:');
    expect(survivorsText('f', [])).toBe('# f: no surviving mutant\n');
  });

  test('the distribution: quartiles of the scored records, a histogram by tenths with 1.0 apart, and totals of all', () => {
    const d = mutationDistribution([
      summary('scored', 1, { killed: 10, byOperator: { constant: { made: 10, killed: 10 } } }),
      summary('scored', 0.5, { killed: 5, survived: 5, byOperator: { constant: { made: 4, killed: 1 }, statement: { made: 6, killed: 4 } } }),
      summary('scored', 0.25, { killed: 2, survived: 6, timedOut: 1, notRun: 2 }),
      summary('scored', 0.95),
      summary('no_mutants', null, { made: 0 }),
      summary('ground_truth_failed', null, { made: 0 }),
    ]);
    expect(d).toMatchObject({ records: 6, scored: 4, noMutants: 1, groundTruthFailed: 1, perfect: 1, min: 0.25, max: 1, killed: 17, survived: 11, timedOut: 1, notRun: 2 });
    expect(d.mean).toBeCloseTo(0.675);
    expect(d.median).toBeCloseTo(0.725);
    expect(d.p25).toBeCloseTo(0.4375);
    expect(d.p75).toBeCloseTo(0.9625);
    expect(d.histogram.map((b) => b.records)).toEqual([0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 1]);
    expect(d.histogram.at(-1)).toEqual({ from: 1, to: 1, records: 1 });
    expect(d.byOperator).toEqual({ constant: { made: 14, killed: 11, rate: 11 / 14 }, statement: { made: 6, killed: 4, rate: 4 / 6 } });
    expect(mutationDistribution([])).toMatchObject({ records: 0, scored: 0, mean: null, median: null });
  });
});
