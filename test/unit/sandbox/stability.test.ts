import { CLOCK_STEP_SEC, compareRuns, formatOffset, observe, stabilityPlan, type RunObservation } from '../../../activities/sandbox/stability';
import { SandboxResultSchema } from '../../../activities/sandbox/schema';

const run = (n: number, overrides: Partial<RunObservation> = {}): RunObservation => ({
  run: n, hashSeed: n, clockOffsetSec: (n - 1) * CLOCK_STEP_SEC, status: 'passed', exception: null, coverageRate: 1, missingLines: [], missingBranches: [], note: null, ...overrides,
});

describe('stability', () => {
  test('the plan: fixed seeds 1..N and clocks one step apart; at least two runs', () => {
    expect(stabilityPlan()).toEqual([
      { run: 1, hashSeed: 1, clockOffsetSec: 0 },
      { run: 2, hashSeed: 2, clockOffsetSec: 90061.5 },
      { run: 3, hashSeed: 3, clockOffsetSec: 180123 },
    ]);
    expect(stabilityPlan(5)).toHaveLength(5);
    expect(() => stabilityPlan(1)).toThrow(/at least 2 runs/);
    expect(() => stabilityPlan(2.5)).toThrow();
  });

  test('offsets read as days, hours, minutes and seconds', () => {
    expect(formatOffset(0)).toBe('0s');
    expect(formatOffset(CLOCK_STEP_SEC)).toBe('1d 1h 1m 1.5s');
    expect(formatOffset(2 * CLOCK_STEP_SEC)).toBe('2d 2h 2m 3s');
    expect(formatOffset(3600)).toBe('1h');
  });

  test('the same outcome and coverage in every run: stable', () => {
    expect(compareRuns([run(1), run(2), run(3)])).toMatchObject({ verdict: 'stable', reason: null });
  });

  test('outcomes that differ: flaky, each run named with its seed and clock and what it gave', () => {
    const r = compareRuns([run(1), run(2, { status: 'failed', exception: 'AssertionError' }), run(3)]);
    expect(r.verdict).toBe('flaky');
    expect(r.reason).toBe(
      'outcomes differ: run 1 (PYTHONHASHSEED=1, clock +0s): passed; run 2 (PYTHONHASHSEED=2, clock +1d 1h 1m 1.5s): failed (AssertionError); run 3 (PYTHONHASHSEED=3, clock +2d 2h 2m 3s): passed',
    );
    // Failing the same way every time is stable; failing differently is not.
    expect(compareRuns([run(1, { status: 'error', exception: 'KeyError' }), run(2, { status: 'error', exception: 'KeyError' })]).verdict).toBe('stable');
    expect(compareRuns([run(1, { status: 'error', exception: 'KeyError' }), run(2, { status: 'error', exception: 'IndexError' })]).verdict).toBe('flaky');
  });

  test('coverage that differs (the rate, or which lines and branches are missed): flaky', () => {
    const r = compareRuns([run(1, { coverageRate: 0.5, missingBranches: ['3->4'] }), run(2, { coverageRate: 0.5, missingBranches: ['3->6'] })]);
    expect(r).toMatchObject({ verdict: 'flaky' });
    expect(r.reason).toBe('coverage differs: run 1 (PYTHONHASHSEED=1, clock +0s): coverage 0.50 (missing 3->4); run 2 (PYTHONHASHSEED=2, clock +1d 1h 1m 1.5s): coverage 0.50 (missing 3->6)');
    expect(compareRuns([run(1), run(2, { coverageRate: 0.75, missingLines: [7] })]).reason).toMatch(/^coverage differs: .*coverage 1\.00; .*coverage 0\.75 \(missing 7\)$/);
  });

  test('a run that failed in the sandbox itself makes the check inconclusive', () => {
    const r = compareRuns([run(1), run(2, { status: 'infrastructure', note: 'could not get a sandbox container' })]);
    expect(r).toMatchObject({ verdict: 'inconclusive' });
    expect(r.reason).toBe('run 2 (PYTHONHASHSEED=2, clock +1d 1h 1m 1.5s) failed in the sandbox itself: could not get a sandbox container');
    expect(() => compareRuns([run(1)])).toThrow();
  });

  test('what is observed of a run', () => {
    const result = SandboxResultSchema.parse({
      status: 'failed', exitCode: 1, durationMs: 5, stdout: '', stderr: '', truncated: false, packages: [],
      exception: { type: 'AssertionError', message: '', traceback: '' },
      coverage: {
        target: 'f', startLine: 1, endLine: 4, hasBranches: true, rate: 0.5, lines: { total: 3, covered: 2, rate: 0.67 }, branches: { total: 2, taken: 1, rate: 0.5 },
        arcs: { total: 4, taken: 3 }, missingLines: [3], missingBranches: [{ from: 2, to: 3, text: '2->3' }], summary: '',
      },
    });
    expect(observe({ run: 2, hashSeed: 2, clockOffsetSec: 5 }, result)).toEqual({
      run: 2, hashSeed: 2, clockOffsetSec: 5, status: 'failed', exception: 'AssertionError', coverageRate: 0.5, missingLines: [3], missingBranches: ['2->3'], note: null,
    });
  });
});
