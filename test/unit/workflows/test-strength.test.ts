import type { FunctionRef, MutationScore, PipelineSettings } from '../../../activities/contracts';
import { pipelineSettingsFrom } from '../../../activities/run-settings';
import { TestStrengthBuilder } from '../../../activities/dataset/test-strength';
import { belowMinScore, thresholdsFor } from '../../../workflows/function';
import { loadConfig } from '../../../temporal.config';

const fn = (split: 'train' | 'eval'): FunctionRef => ({ functionId: 'f', repoId: 'o/r', commit: 'c', path: 'm.py', qualname: 'g', name: 'g', split, license: null });
const score = (status: MutationScore['status'], value: number | null): MutationScore => ({
  status, score: value, made: 4, killed: 2, survived: 2, timedOut: 0, notRun: 0, survivorsKey: 'k', summary: 's',
});

describe('test strength settings and decisions', () => {
  it('are off by default, and read per split from loops.mutation and loops.stability', () => {
    const off = pipelineSettingsFrom(loadConfig({ env: {} }));
    expect(off.mutation).toEqual({ enabled: false, minScore: { train: 0, eval: 0 }, rounds: 1, cap: 30, seed: 0 });
    expect(off.stability).toEqual({ runs: { train: 0, eval: 0 }, keepFlaky: false });
    expect(thresholdsFor(fn('train'), off).mutationScore).toBeNull();
    const on = pipelineSettingsFrom(
      loadConfig({ env: { REPOST_LOOPS_MUTATION_ENABLED: 'true', REPOST_LOOPS_MUTATION_MIN_SCORE_TRAIN: '0.6', REPOST_LOOPS_MUTATION_MIN_SCORE_EVAL: '0.8', REPOST_LOOPS_STABILITY_RUNS_EVAL: '3', REPOST_LOOPS_MUTATION_CAP: '12' } }),
    );
    expect(thresholdsFor(fn('train'), on).mutationScore).toBe(0.6);
    expect(thresholdsFor(fn('eval'), on).mutationScore).toBe(0.8);
    expect(on.stability!.runs).toEqual({ train: 0, eval: 3 });
    // The mutants' sample travels with the rest of the stage's settings.
    expect(on.mutation).toMatchObject({ cap: 12, seed: 0 });
  });

  it('refuse a stability check of one run and a minimum outside 0..1', () => {
    expect(() => loadConfig({ env: { REPOST_LOOPS_STABILITY_RUNS_TRAIN: '1' } })).toThrow(/at least 2 runs/);
    expect(() => loadConfig({ env: { REPOST_LOOPS_MUTATION_MIN_SCORE_EVAL: '1.5' } })).toThrow(/minScore\.eval/);
  });

  it('hold a scored record to the minimum; a script with no mutant or no score has nothing to fall short of', () => {
    expect(belowMinScore(score('scored', 0.5), 0.6)).toBe(true);
    expect(belowMinScore(score('scored', 0.6), 0.6)).toBe(false);
    expect(belowMinScore(score('no_mutants', null), 0.6)).toBe(false);
    expect(belowMinScore(score('ground_truth_failed', null), 0.6)).toBe(false);
  });

  it('a run frozen before the stages existed has them off', () => {
    const frozen = { ...pipelineSettingsFrom(loadConfig({ env: {} })), mutation: undefined, stability: undefined } as PipelineSettings;
    expect(thresholdsFor(fn('eval'), frozen).mutationScore).toBeNull();
  });
});

describe("a run's test strength", () => {
  it('spreads the scores, adds up the mutants and counts the stability verdicts', () => {
    const b = new TestStrengthBuilder();
    b.add({ mutation_score: 0.25, mutants: { made: 4, killed: 1, survived: 3, timed_out: 0, not_run: 0, left_out: { output: 12, message: 2, equivalent: 0 } }, mutation_rounds: 0, stability: 'stable' });
    // A record from before the left-out counts (no left_out) adds nothing to them.
    b.add({ mutation_score: 1, mutants: { made: 6, killed: 6, survived: 0, timed_out: 2, not_run: 0 }, mutation_rounds: 2, stability: 'flaky' });
    b.add({ mutation_score: null, mutants: { made: 0, killed: 0, survived: 0, timed_out: 0, not_run: 0, left_out: { output: 0, message: 1, equivalent: 3 } } });
    b.add({ mutation_score: 0.75, mutants: { made: 4, killed: 3, survived: 1, timed_out: 0, not_run: 0 }, mutation_rounds: 1, stability: null });
    b.add({ mutation_score: null, mutants: null });
    const t = b.result();
    expect(t).toMatchObject({ scored: 3, unscored: 2, mean: 2 / 3, median: 0.75, min: 0.25, max: 1, perfect: 1, improvedByRounds: 2, mutationRounds: 3 });
    expect(t.mutants).toEqual({ made: 14, killed: 10, survived: 4, timedOut: 2, notRun: 0, leftOut: { output: 12, message: 3, equivalent: 3 } });
    expect(t.stability).toEqual({ stable: 1, flaky: 1, unchecked: 3 });
    expect(t.histogram.map((h) => h.records)).toEqual([0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1]);
  });
});
