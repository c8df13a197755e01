/** The crawl estimate: calls per step from the configuration and the averages, sizes from the targets' contexts. */
import { averagesFromExchanges, estimateRun, formatEstimate, MEASURED_STEP_AVERAGES, type EstimateTarget } from '../../../activities/llm/estimate';
import { classKind, functionKind } from '../../../activities/targets';
import { loadConfig } from '../../../temporal.config';

const fn = (over: Partial<EstimateTarget> = {}): EstimateTarget => ({ kind: 'function', steps: functionKind.llmSteps, crossFile: false, split: 'train', contextTokens: 400, ...over });
const priced = { prices: { m: { inputPerMTok: 2, outputPerMTok: 8 } }, model: 'm' };
const step = (e: ReturnType<typeof estimateRun>, name: string) => e.steps.find((s) => s.step === name);
/** Rounding: one token a step at most. */
const steps = (e: ReturnType<typeof estimateRun>) => e.steps.length;

describe('the crawl estimate', () => {
  it('counts each step from the averages and the configuration: rounds off, mutation on, k samples', () => {
    const config = loadConfig({ overrides: { llm: priced } });
    const base = estimateRun([fn(), fn({ crossFile: true })], config);
    expect(step(base, 'sandbox')!.calls).toBeCloseTo(MEASURED_STEP_AVERAGES.sandbox.callsPerTarget);
    expect(step(base, 'aggregate')!.calls).toBeCloseTo(MEASURED_STEP_AVERAGES.aggregate.callsPerTarget);
    expect(step(base, 'tests')!.calls).toBeCloseTo(2 * MEASURED_STEP_AVERAGES.tests.callsPerTarget);
    expect(step(base, 'mutation')).toBeUndefined();
    expect(step(base, 'solve')).toBeUndefined();
    const noRounds = estimateRun([fn()], loadConfig({ overrides: { llm: priced, loops: { debugRounds: 0, coverageRounds: 0, mutation: { enabled: true } } } }));
    expect(step(noRounds, 'debug')).toBeUndefined();
    expect(step(noRounds, 'coverage')).toBeUndefined();
    expect(step(noRounds, 'mutation')!.calls).toBeGreaterThan(0);
    const k5 = estimateRun([fn({ split: 'eval' })], loadConfig({ overrides: { llm: priced, loops: { solvability: { k: 5 } } } }));
    expect(step(k5, 'solve')!.calls).toBeCloseTo(5 * MEASURED_STEP_AVERAGES.solve.callsPerTarget);
  });

  it("asks a target's kind which steps it runs: a class its class steps and the shared mutation step, never solvability", () => {
    const config = loadConfig({ overrides: { llm: priced, loops: { mutation: { enabled: true }, solvability: { k: 5 } } } });
    const cls = estimateRun([fn({ kind: 'class', steps: classKind.llmSteps, split: 'eval' })], config);
    const asked = cls.steps.map((s) => s.step).sort();
    expect(asked).toEqual(['class_check_functionality', 'class_check_tests', 'class_coverage', 'class_debug', 'class_sandbox', 'class_tests', 'mutation']);
    expect(cls.targets).toEqual({ functions: 0, classes: 1, eval: 1 });
    const both = estimateRun([fn({ split: 'eval' }), fn({ kind: 'class', steps: classKind.llmSteps })], config);
    expect(both.targets).toEqual({ functions: 1, classes: 1, eval: 1 });
    expect(step(both, 'solve')!.calls).toBeCloseTo(5 * MEASURED_STEP_AVERAGES.solve.callsPerTarget);
    expect(step(both, 'class_tests')!.calls).toBeCloseTo(MEASURED_STEP_AVERAGES.class_tests.callsPerTarget);
  });

  it("grows with the targets' contexts, and prices the calls (unknown models named, not free)", () => {
    const config = loadConfig({ overrides: { llm: priced } });
    const small = estimateRun([fn({ contextTokens: 100 })], config);
    const large = estimateRun([fn({ contextTokens: 4000 })], config);
    expect(large.total.promptTokens).toBeGreaterThan(small.total.promptTokens + 4000);
    expect(large.total.costUsd).toBeGreaterThan(small.total.costUsd);
    expect(small.unpriced).toEqual([]);
    const unpriced = estimateRun([fn()], loadConfig({ overrides: { llm: { model: 'local-model' } } }));
    expect(unpriced.unpriced).toEqual(['local-model']);
    expect(unpriced.total.costUsd).toBe(0);
    expect(formatEstimate(unpriced, (usd) => `$${usd.toFixed(4)}`)).toMatch(/^tests +local-model .* price unknown$/m);
  });

  it('counts a target with the same content as an earlier one as answered from the answer cache', () => {
    const config = loadConfig({ overrides: { llm: priced } });
    const once = estimateRun([fn({ contentKey: 'a' })], config);
    const twice = estimateRun([fn({ contentKey: 'a' }), fn({ contentKey: 'a' })], config);
    expect(twice.total.calls).toBeCloseTo(2 * once.total.calls);
    expect(twice.total.promptTokens).toBe(once.total.promptTokens);
    expect(twice.total.cachedCalls).toBeCloseTo(once.total.calls);
    const off = estimateRun([fn({ contentKey: 'a' }), fn({ contentKey: 'a' })], loadConfig({ overrides: { llm: { ...priced, cache: { enabled: false } } } }));
    expect(Math.abs(off.total.promptTokens - 2 * once.total.promptTokens)).toBeLessThanOrEqual(steps(once));
  });

  it("uses a resumed run's own averages in place of the measured ones", () => {
    const config = loadConfig({ overrides: { llm: priced } });
    // Two functions started: three tests calls and one debug call between them.
    const own = averagesFromExchanges(
      [
        { step: 'tests', functionId: 'a', promptTokens: 3000, completionTokens: 900 },
        { step: 'tests', functionId: 'a', promptTokens: 3100, completionTokens: 900 },
        { step: 'tests', functionId: 'b', promptTokens: 2900, completionTokens: 900 },
        { step: 'debug', functionId: 'b', promptTokens: 3500, completionTokens: 1000 },
      ],
      400,
    );
    expect(own.tests!.callsPerTarget).toBe(1.5);
    expect(own.debug!.callsPerTarget).toBe(0.5);
    expect(own.sandbox).toBeUndefined();
    const e = estimateRun([fn(), fn()], config, own);
    expect(e.averages).toBe('this run so far');
    expect(step(e, 'tests')!.calls).toBe(3);
    // The same tokens a call as the run's own calls: 3000 prompt and 900 completion on average.
    expect(step(e, 'tests')!.promptTokens / 3).toBeCloseTo(3000, -1);
    expect(step(e, 'tests')!.completionTokens / 3).toBeCloseTo(900, -1);
    expect(step(e, 'sandbox')!.calls).toBeCloseTo(2 * MEASURED_STEP_AVERAGES.sandbox.callsPerTarget);
  });
});
