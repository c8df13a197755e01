/**
 * Is a script's verdict stable? The same script runs several times, each run with another
 * PYTHONHASHSEED (set orders and dict orders of strings change), another working folder (every
 * run has its own `/scratch/run-<random>`), and another wall clock (the harness shifts what
 * `time` and `datetime` say by a different offset each run, see the harness's repost_clock.py;
 * the runs also start at different real times, one after another). A script whose outcome or
 * coverage differs between the runs is flaky; the differing outcomes are the reason.
 *
 * The plan and the comparison are pure; `checkStability` runs them.
 */
import type { SandboxExecutor } from './executor';
import type { RunHooks, RunRequest } from './run-request';
import type { SandboxResult, SandboxStatus } from './schema';

export const DEFAULT_STABILITY_RUNS = 3;
/** Each run's clock is this much later than the one before: every field of a date and time moves (1 d 1 h 1 min 1.5 s). */
export const CLOCK_STEP_SEC = 90061.5;

export interface StabilityRunPlan {
  /** 1-based. */
  run: number;
  hashSeed: number;
  clockOffsetSec: number;
}

/** The runs' seeds (1, 2, 3, ...: fixed, so a verdict can be reproduced) and clock offsets (0, one step, two steps, ...). */
export function stabilityPlan(runs: number = DEFAULT_STABILITY_RUNS): StabilityRunPlan[] {
  if (!Number.isInteger(runs) || runs < 2) throw new Error(`a stability check needs at least 2 runs, got ${runs}`);
  return Array.from({ length: runs }, (_, i) => ({ run: i + 1, hashSeed: i + 1, clockOffsetSec: i * CLOCK_STEP_SEC }));
}

/** What a run is compared on. */
export interface RunObservation extends StabilityRunPlan {
  status: SandboxStatus;
  /** The uncaught exception's type when the run did not pass. */
  exception: string | null;
  coverageRate: number | null;
  missingLines: number[];
  /** `from->to` texts. */
  missingBranches: string[];
  /** The run's last note when it failed in the sandbox itself. */
  note: string | null;
}

export function observe(plan: StabilityRunPlan, result: SandboxResult): RunObservation {
  return {
    ...plan,
    status: result.status,
    exception: result.status === 'passed' ? null : (result.exception?.type ?? null),
    coverageRate: result.coverage?.rate ?? null,
    missingLines: result.coverage?.missingLines ?? [],
    missingBranches: result.coverage?.missingBranches.map((b) => b.text) ?? [],
    note: result.status === 'infrastructure' ? (result.notes.at(-1) ?? null) : null,
  };
}

/** stable: every run gave the same outcome and coverage; flaky: they differ (`reason` says how); inconclusive: a run failed in the sandbox itself. */
export type StabilityVerdict = 'stable' | 'flaky' | 'inconclusive';

export interface StabilityResult {
  verdict: StabilityVerdict;
  reason: string | null;
  runs: RunObservation[];
}

/** `1d 1h 1m 1.5s`, `0s`. */
export function formatOffset(seconds: number): string {
  if (seconds === 0) return '0s';
  const parts: string[] = [];
  let rest = seconds;
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60]] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  if (rest > 0) parts.push(`${Number(rest.toFixed(3))}s`);
  return parts.join(' ');
}

function outcomeOf(r: RunObservation): string {
  return r.status === 'passed' ? 'passed' : `${r.status}${r.exception ? ` (${r.exception})` : ''}`;
}

function coverageOf(r: RunObservation): string {
  if (r.coverageRate === null) return 'no coverage';
  const missing = [...r.missingLines.map(String), ...r.missingBranches];
  return `coverage ${r.coverageRate.toFixed(2)}${missing.length ? ` (missing ${missing.join(', ')})` : ''}`;
}

function label(r: RunObservation): string {
  return `run ${r.run} (PYTHONHASHSEED=${r.hashSeed}, clock +${formatOffset(r.clockOffsetSec)})`;
}

/** The verdict over the runs (pure). */
export function compareRuns(runs: RunObservation[]): StabilityResult {
  if (runs.length < 2) throw new Error('a stability check compares at least 2 runs');
  const broken = runs.filter((r) => r.status === 'infrastructure');
  if (broken.length > 0) {
    return { verdict: 'inconclusive', reason: broken.map((r) => `${label(r)} failed in the sandbox itself${r.note ? `: ${r.note}` : ''}`).join('; '), runs };
  }
  const reasons: string[] = [];
  if (new Set(runs.map(outcomeOf)).size > 1) reasons.push(`outcomes differ: ${runs.map((r) => `${label(r)}: ${outcomeOf(r)}`).join('; ')}`);
  if (new Set(runs.map(coverageOf)).size > 1) reasons.push(`coverage differs: ${runs.map((r) => `${label(r)}: ${coverageOf(r)}`).join('; ')}`);
  return reasons.length ? { verdict: 'flaky', reason: reasons.join('. '), runs } : { verdict: 'stable', reason: null, runs };
}

/** Runs `request` as the plan says, one run after another, and compares them. */
export async function checkStability(
  executor: SandboxExecutor,
  request: RunRequest,
  runs: number = DEFAULT_STABILITY_RUNS,
  hooks: RunHooks = {},
): Promise<StabilityResult> {
  const observations: RunObservation[] = [];
  for (const plan of stabilityPlan(runs)) {
    const result = await executor.run({ ...request, hashSeed: plan.hashSeed, clockOffsetSec: plan.clockOffsetSec }, hooks);
    observations.push(observe(plan, result));
  }
  return compareRuns(observations);
}
