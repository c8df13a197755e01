/**
 * Mutation testing of an evaluation script: how many wrong implementations its tests reject.
 *
 * The ground truth is placed as `<name>_new_implementation` exactly as a ground-truth run places
 * it (new-implementation.ts); the harness then makes mutants of that copy's body with Python's
 * `ast` (arithmetic, comparison, boolean, negation, boundary, constant, statement, return and
 * argument-order changes, at most `cap`, sampled with `seed`) and runs the script with the ground
 * truth (the control) and with each mutant in forks of one warm parent, in one container run
 * (see the harness's repost_mutants.py and repost_mutation_run.py). A mutant is killed when the
 * script fails, survives when it passes; a timeout is killed and counted apart.
 *
 * The score is killed / run. Mutants no allowed test can see are left out before they run and
 * counted by reason (`leftOut`): changes inside printing, logging and warning calls, in the texts
 * of exception messages (the tests may not compare any of these), and mutants that compile to the
 * original's bytecode. Other equivalent mutants (changes no input can tell apart) cannot be told
 * from weak tests automatically: the survivors are listed with their diffs for a person to judge.
 *
 * `testMutants` has the shape a pipeline activity wants: a script and a target in, a small
 * summary and the survivors' diffs (as one text, an artifact) out.
 */
import type { MutationSpec } from './harness-command';
import type { SandboxExecutor } from './executor';
import type { RunHooks, RunLimits, RunRequest } from './run-request';
import { GROUND_TRUTH_PLACEMENT, newImplementationName, type Placement } from './new-implementation';
import type { MutantResult, MutationReport, SandboxResult, SandboxStatus } from './schema';

export interface MutationSettings {
  /** At most this many mutants per function. */
  cap: number;
  /** The sample's seed: the same script, target and seed give the same mutants. */
  seed: number;
  /** Each mutant's time limit in seconds; null: 2 s plus 10 times the ground truth's time, at most the run's limit. */
  mutantTimeoutSec: number | null;
  /**
   * A measurement of the left-out rules: the sample is drawn as if no mutant were left out and the
   * left-out ones run too, tagged; they never count in the score, only in `scoreWithLeftOut`.
   */
  keepLeftOut?: boolean;
  /** No mutant starts once the run has taken this long; null: five times the run's time limit. */
  budgetSec: number | null;
}

export const DEFAULT_MUTATION_SETTINGS: MutationSettings = { cap: 30, seed: 0, mutantTimeoutSec: null, budgetSec: null };

/** The harness's request for the placed copy of `functionName` (`name` or `Class.method`). */
export function mutationSpec(functionName: string, settings: Partial<MutationSettings>, timeoutSec: number): MutationSpec {
  const s = { ...DEFAULT_MUTATION_SETTINGS, ...settings };
  return {
    target: newImplementationName(functionName),
    cap: s.cap,
    seed: s.seed,
    mutantTimeoutSec: s.mutantTimeoutSec,
    budgetSec: s.budgetSec ?? 5 * timeoutSec,
    ...(s.keepLeftOut ? { keepLeftOut: true } : {}),
  };
}

/**
 * scored: the ground truth passed and at least one mutant ran; no_mutants: it passed but the body
 * gave no mutant (or none ran); ground_truth_failed: the script does not pass with its ground
 * truth, so no mutant says anything.
 */
export type MutationStatus = 'scored' | 'no_mutants' | 'ground_truth_failed';

export interface MutationSummary {
  status: MutationStatus;
  /** killed / (killed + survived); null unless scored. */
  score: number | null;
  /** Mutants made (at most the cap). */
  made: number;
  /** Killed mutants, the timed-out ones included. */
  killed: number;
  survived: number;
  timedOut: number;
  /** Made but not run (the run's budget or its container gave out). */
  notRun: number;
  /** The ground truth's run in the mutation run. */
  groundTruth: SandboxStatus;
  /** Mutation sites in the body (before the cap, duplicates and mutants that do not compile). */
  candidates: number;
  /** Mutants left out because no allowed test can see them, by reason (output, message, equivalent); see the harness. */
  leftOut: Record<string, number>;
  /**
   * The score had the left-out mutants counted (the rule before they were left out): only a run
   * with `keepLeftOut` runs them, otherwise it equals `score`.
   */
  scoreWithLeftOut: number | null;
  /** Killed / made per operator. */
  byOperator: Record<string, { made: number; killed: number }>;
  mode: MutationReport['mode'] | null;
  controlMs: number | null;
  mutantTimeoutSec: number | null;
  notes: string[];
}

export interface SurvivingMutant {
  operator: string;
  line: number;
  diff: string;
}

/** The summary and the survivors of a mutation run's result (pure). */
export function summarizeMutation(result: SandboxResult): { summary: MutationSummary; survivors: SurvivingMutant[] } {
  const report = result.mutation ?? null;
  const all: MutantResult[] = report?.mutants ?? [];
  // Mutants made only to measure the left-out rules are never scored.
  const mutants = all.filter((m) => !m.leftOut);
  const isKilled = (m: MutantResult) => m.outcome === 'killed' || m.outcome === 'timeout';
  const allRan = all.filter((m) => isKilled(m) || m.outcome === 'survived');
  const count = (outcome: MutantResult['outcome']) => mutants.filter((m) => m.outcome === outcome).length;
  const timedOut = count('timeout');
  const killed = count('killed') + timedOut;
  const survived = count('survived');
  const byOperator: Record<string, { made: number; killed: number }> = {};
  for (const m of mutants) {
    const entry = (byOperator[m.operator] ??= { made: 0, killed: 0 });
    entry.made += 1;
    if (m.outcome === 'killed' || m.outcome === 'timeout') entry.killed += 1;
  }
  const ran = killed + survived;
  const status: MutationStatus = result.status !== 'passed' ? 'ground_truth_failed' : ran === 0 ? 'no_mutants' : 'scored';
  const summary: MutationSummary = {
    status,
    score: status === 'scored' ? killed / ran : null,
    scoreWithLeftOut: result.status === 'passed' && allRan.length > 0 ? allRan.filter(isKilled).length / allRan.length : null,
    made: mutants.length,
    killed,
    survived,
    timedOut,
    notRun: count('not_run'),
    groundTruth: result.status,
    candidates: report?.candidates ?? 0,
    leftOut: { ...(report?.leftOut ?? {}) },
    byOperator,
    mode: report?.mode ?? null,
    controlMs: report?.controlMs ?? null,
    mutantTimeoutSec: report?.mutantTimeoutSec ?? null,
    // Without the harness's report (a run that failed before it, or left none), the run's last note says why.
    notes: report?.notes ?? result.notes.slice(-1),
  };
  const survivors = mutants.filter((m) => m.outcome === 'survived').map((m) => ({ operator: m.operator, line: m.line, diff: m.diff }));
  return { summary, survivors };
}

/** The survivors as one text for a person to judge (an artifact): each with its operator, line and diff. */
export function survivorsText(functionName: string, survivors: SurvivingMutant[]): string {
  if (survivors.length === 0) return `# ${functionName}: no surviving mutant\n`;
  const parts = survivors.map((s, i) => `## ${i + 1}. ${s.operator}, line ${s.line}\n\n${s.diff}\n`);
  return `# ${functionName}: ${survivors.length} surviving mutant(s)\n\nThe tests pass with each change below. Either it is equivalent (no input tells it apart) or the tests miss it.\n\n${parts.join('\n')}`;
}

export interface MutationInput {
  /** The evaluation script (without the new implementation). */
  script: string;
  /** The ground truth, placed as `<name>_new_implementation` and mutated there. */
  originalFunction: string;
  /** `name` or `Class.method`, or a class's name when `kind` is `class`. */
  functionName: string;
  /** How the target is placed (its kind's `mutationTarget`): `class` places the whole class as `<Class>_new_implementation` and mutates its methods' bodies; default `function`. */
  kind?: Placement;
  /** Resolve the packages as of the code's date, as its ground-truth run did (see as-of.ts). */
  packagesAsOf?: RunRequest['packagesAsOf'];
  timeoutSec?: number;
  limits?: RunLimits;
  /** Read the script's imports and install their packages first (as a ground-truth run does); default on. */
  install?: boolean;
  /**
   * The packages the script's ground-truth run installed (its result's `requirements`): with
   * `install: false`, the same environment without reading the imports again.
   */
  requirements?: string[];
  localModules?: string[];
}

export interface MutationOutcome {
  summary: MutationSummary;
  survivors: SurvivingMutant[];
  /** The survivors' diffs as one text (see survivorsText). */
  survivorsText: string;
  /** The run itself (the ground truth's output, notes, packages). */
  result: SandboxResult;
}

/** Mutation testing of one script's target in one container run. */
export async function testMutants(
  executor: SandboxExecutor,
  input: MutationInput,
  settings: Partial<MutationSettings> = {},
  hooks: RunHooks = {},
): Promise<MutationOutcome> {
  const timeoutSec = input.timeoutSec ?? executor.config.timeoutSec;
  const script = GROUND_TRUTH_PLACEMENT[input.kind ?? 'function'](input.script, input.originalFunction, input.functionName);
  const result = await executor.mutate(
    {
      script,
      timeoutSec,
      limits: input.limits,
      install: input.install ?? true,
      requirements: input.requirements,
      localModules: input.localModules,
      packagesAsOf: input.packagesAsOf,
    },
    mutationSpec(input.functionName, settings, timeoutSec),
    hooks,
  );
  const { summary, survivors } = summarizeMutation(result);
  return { summary, survivors, survivorsText: survivorsText(input.functionName, survivors), result };
}

/** How the scores of many records are spread (pure): the scored records' scores and the counts of all. */
export interface MutationDistribution {
  records: number;
  scored: number;
  noMutants: number;
  groundTruthFailed: number;
  mean: number | null;
  median: number | null;
  p25: number | null;
  p75: number | null;
  min: number | null;
  max: number | null;
  /** Scored records per tenth: [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0), and 1.0 alone. */
  histogram: { from: number; to: number; records: number }[];
  /** Records whose every mutant was killed. */
  perfect: number;
  made: number;
  killed: number;
  survived: number;
  timedOut: number;
  notRun: number;
  /** Mutants left out (no allowed test can see them) over all records, by reason. */
  leftOut: Record<string, number>;
  /** Killed / made per operator over all records. */
  byOperator: Record<string, { made: number; killed: number; rate: number }>;
}

/** How mutation scores spread: mean, quartiles, extremes, a histogram by tenths (1.0 apart) and how many are 1.0. */
export interface ScoreSpread {
  mean: number | null;
  p25: number | null;
  median: number | null;
  p75: number | null;
  min: number | null;
  max: number | null;
  /** Scores per tenth: [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0), and 1.0 alone. */
  histogram: { from: number; to: number; records: number }[];
  /** Scores of 1.0: every mutant killed. */
  perfect: number;
}

export function scoreSpread(scores: readonly number[]): ScoreSpread {
  const sorted = [...scores].sort((a, b) => a - b);
  const quantile = (q: number): number | null => {
    if (sorted.length === 0) return null;
    const at = (sorted.length - 1) * q;
    const lo = Math.floor(at);
    const hi = Math.ceil(at);
    return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
  };
  const histogram = Array.from({ length: 10 }, (_, i) => ({ from: i / 10, to: (i + 1) / 10, records: 0 }));
  histogram.push({ from: 1, to: 1, records: 0 });
  for (const score of sorted) histogram[score >= 1 ? 10 : Math.floor(score * 10)]!.records += 1;
  return {
    mean: sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : null,
    p25: quantile(0.25),
    median: quantile(0.5),
    p75: quantile(0.75),
    min: sorted[0] ?? null,
    max: sorted.at(-1) ?? null,
    histogram,
    perfect: sorted.filter((x) => x >= 1).length,
  };
}

export function mutationDistribution(summaries: MutationSummary[]): MutationDistribution {
  const scores = summaries.filter((s) => s.status === 'scored').map((s) => s.score!);
  const sum = (f: (s: MutationSummary) => number) => summaries.reduce((n, s) => n + f(s), 0);
  const byOperator: MutationDistribution['byOperator'] = {};
  for (const s of summaries) {
    for (const [op, c] of Object.entries(s.byOperator)) {
      const entry = (byOperator[op] ??= { made: 0, killed: 0, rate: 0 });
      entry.made += c.made;
      entry.killed += c.killed;
    }
  }
  const leftOut: Record<string, number> = {};
  for (const s of summaries) for (const [reason, n] of Object.entries(s.leftOut ?? {})) leftOut[reason] = (leftOut[reason] ?? 0) + n;
  for (const entry of Object.values(byOperator)) entry.rate = entry.made === 0 ? 0 : entry.killed / entry.made;
  return {
    records: summaries.length,
    scored: scores.length,
    noMutants: summaries.filter((s) => s.status === 'no_mutants').length,
    groundTruthFailed: summaries.filter((s) => s.status === 'ground_truth_failed').length,
    ...scoreSpread(scores),
    made: sum((s) => s.made),
    killed: sum((s) => s.killed),
    survived: sum((s) => s.survived),
    timedOut: sum((s) => s.timedOut),
    notRun: sum((s) => s.notRun),
    leftOut,
    byOperator,
  };
}

/**
 * The scores of many records with the left-out mutants counted (before the rules) and without
 * them (after), side by side as text: scored records, mean, quartiles, extremes, perfect scores
 * and the histogram by tenths. From summaries of a `keepLeftOut` run (pure).
 */
export function leftOutComparison(summaries: MutationSummary[]): { before: ScoreSpread & { scored: number }; after: ScoreSpread & { scored: number }; text: string } {
  const beforeScores = summaries.map((s) => s.scoreWithLeftOut).filter((x): x is number => typeof x === 'number');
  const afterScores = summaries.filter((s) => s.status === 'scored').map((s) => s.score!);
  const before = { scored: beforeScores.length, ...scoreSpread(beforeScores) };
  const after = { scored: afterScores.length, ...scoreSpread(afterScores) };
  const f = (x: number | null) => (x === null ? '-' : x.toFixed(3));
  const rows: [string, string, string][] = [
    ['records scored', String(before.scored), String(after.scored)],
    ['mean', f(before.mean), f(after.mean)],
    ['p25', f(before.p25), f(after.p25)],
    ['median', f(before.median), f(after.median)],
    ['p75', f(before.p75), f(after.p75)],
    ['min', f(before.min), f(after.min)],
    ['perfect (1.0)', String(before.perfect), String(after.perfect)],
    ...before.histogram.map((b, i): [string, string, string] => [
      b.from === b.to ? 'score 1.0' : `score [${b.from.toFixed(1)}, ${b.to.toFixed(1)})`,
      String(b.records),
      String(after.histogram[i]!.records),
    ]),
  ];
  const left = mutationDistribution(summaries).leftOut;
  const width = Math.max(...rows.map((r) => r[0].length));
  const text = [
    `${''.padEnd(width)}  ${'before'.padStart(8)}  ${'after'.padStart(8)}`,
    ...rows.map(([label, b, a]) => `${label.padEnd(width)}  ${b.padStart(8)}  ${a.padStart(8)}`),
    `left out: ${Object.entries(left).map(([reason, n]) => `${n} ${reason}`).join(', ') || 'none'}`,
  ].join('\n');
  return { before, after, text };
}
