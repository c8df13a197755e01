/**
 * `eval-summary.json`: the run's numbers from its `eval.jsonl` lines, added one line at a time
 * (the lines are streamed from the store, so a run of any size is summarised in bounded memory).
 * Pass@k is the mean over evaluated functions (those without an error); per self-repair round,
 * per repository, on the subset with an original docstring (RepoST's Table 8), failure kinds of
 * first answers and of final ones, the harness's own failures apart, the ranking methods' n@k and
 * Pr@k, tokens and cost per step.
 */
import { addUsage, emptyUsage, type Usage } from '../store/usage';
import type { DatasetMeta } from './dataset';
import { FAILURE_KINDS, type FailureKind } from './outcome';
import { passAtK } from './pass-at-k';
import { RANKING_METHODS, type RankingMethod } from './ranking';
import type { EvalLine } from './results';
import { type EvalSettings, effectiveKs } from './settings';

export interface RankingTotals {
  functions: number;
  hitAtK: Record<string, number>;
  precisionAtK: Record<string, number | null>;
}

export interface EvalSummary {
  runId: string;
  task: EvalSettings['task'];
  model: string;
  settings: EvalSettings;
  dataset: DatasetMeta;
  functions: number;
  evaluated: number;
  /** Functions that could not be evaluated, with the reason (the first `MAX_LISTED` of them). */
  errors: { functionId: string; error: string }[];
  errorCount: number;
  /** Steps of evaluated functions that failed for good while the rest was kept (the first `MAX_LISTED`). */
  stepErrors: { functionId: string; error: string }[];
  stepErrorCount: number;
  /** Functions of the dataset without a result (only when not even their failure could be recorded). */
  missing: number;
  samples: number;
  passAtK: Record<string, number | null>;
  /** Pass@k after each self-repair round (round 0 = first answers). */
  passAtKByRound: Record<string, number | null>[];
  byRepository: Record<string, { functions: number; passAtK: Record<string, number | null>; finalPassAt1: number | null }>;
  withDocstring: { functions: number; passAtK: Record<string, number | null> };
  /** Failing samples by kind, of first answers and of final ones; `harness` counts the harness's failures, which are not in `samples`. */
  failureKinds: { initial: Record<FailureKind, number>; final: Record<FailureKind, number> };
  /**
   * Failures the harness caused, counted apart and never against the model: samples whose first
   * run it failed (left out of `samples` and Pass@k), repair rounds it failed (their samples keep
   * their earlier rounds), the functions with any, the first few, and the preamble imports it
   * left out (samples whose preamble lost an import of the repository or a name the script defines).
   */
  harness: { samples: number; repairRounds: number; functions: number; examples: { functionId: string; summary: string }[]; samplesWithDroppedImports: number };
  exceptionTypes: { initial: Record<string, number>; final: Record<string, number> };
  /** The methods scored: all three on the candidate-test matrix, or random alone (no tests written). */
  ranking: { selected: EvalSettings['select']; methods: Partial<Record<RankingMethod, RankingTotals>> } | null;
  training: { functionsWithPassing: { initial: number; afterRepair: number }; examples: number; groundTruthExamples: number; duplicates: number; unparsable: number } | null;
  augmentation: { functionsAugmented: number; inputsProposed: number; inputsKept: number } | null;
  usage: { total: Usage; byStep: Record<string, Usage> };
}

/** Errors listed by name in the summary; the rest are counted (every line has its own in eval.jsonl). */
export const MAX_LISTED = 50;

function zeroKinds(): Record<FailureKind, number> {
  return Object.fromEntries(FAILURE_KINDS.map((k) => [k, 0])) as Record<FailureKind, number>;
}

/** Sum and count per key, for means over the functions that have the key. */
class Means {
  private readonly sums = new Map<string, { sum: number; count: number }>();

  add(key: string, value: number | null | undefined): void {
    const entry = this.sums.get(key) ?? { sum: 0, count: 0 };
    if (typeof value === 'number') {
      entry.sum += value;
      entry.count += 1;
    }
    this.sums.set(key, entry);
  }

  result(order: (a: string, b: string) => number = byK): Record<string, number | null> {
    return Object.fromEntries([...this.sums].sort(([a], [b]) => order(a, b)).map(([k, { sum, count }]) => [k, count ? sum / count : null]));
  }
}

/** `pass@2` before `pass@10`. */
function byK(a: string, b: string): number {
  return Number(a.split('@')[1]) - Number(b.split('@')[1]) || a.localeCompare(b);
}

/** Mean Pass@k per k over functions with at least k samples, from (n, c) pairs added one at a time. */
class PassTable {
  private readonly means = new Means();

  constructor(private readonly ks: readonly number[]) {
    for (const k of ks) this.means.add(`pass@${k}`, null);
  }

  add(n: number, c: number): void {
    for (const k of this.ks) if (n >= k) this.means.add(`pass@${k}`, passAtK(n, c, k));
  }

  result(): Record<string, number | null> {
    return this.means.result();
  }
}

export interface SummaryMeta {
  runId: string;
  model: string;
  settings: EvalSettings;
  dataset: DatasetMeta;
}

/** Builds the run's summary from its lines, one at a time. */
export class EvalSummaryBuilder {
  private readonly ks: number[];
  private readonly rounds: number;
  private functions = 0;
  private evaluated = 0;
  private samples = 0;
  private readonly errors: EvalSummary['errors'] = [];
  private errorCount = 0;
  private readonly stepErrors: EvalSummary['stepErrors'] = [];
  private stepErrorCount = 0;
  private readonly passByRound: PassTable[];
  private readonly byRepo = new Map<string, { functions: number; pass: PassTable; final: PassTable }>();
  private readonly withDoc: { functions: number; pass: PassTable };
  private readonly failureKinds = { initial: zeroKinds(), final: zeroKinds() };
  private readonly exceptionTypes = { initial: {} as Record<string, number>, final: {} as Record<string, number> };
  private readonly harness: EvalSummary['harness'] = { samples: 0, repairRounds: 0, functions: 0, examples: [], samplesWithDroppedImports: 0 };
  private rankedFunctions = 0;
  private readonly ranking = new Map<RankingMethod, { hit: Means; precision: Means }>();
  private readonly training = { initial: 0, afterRepair: 0, examples: 0, groundTruthExamples: 0, duplicates: 0, unparsable: 0 };
  private readonly augmentation = { functionsAugmented: 0, inputsProposed: 0, inputsKept: 0 };
  private total = emptyUsage();
  private readonly byStep = new Map<string, Usage>();

  constructor(private readonly meta: SummaryMeta) {
    this.ks = effectiveKs(meta.settings);
    this.rounds = meta.settings.repairRounds;
    this.passByRound = Array.from({ length: this.rounds + 1 }, () => new PassTable(this.ks));
    this.withDoc = { functions: 0, pass: new PassTable(this.ks) };
  }

  add(l: EvalLine): void {
    this.functions += 1;
    this.total = addUsage(this.total, l.usage);
    for (const [step, u] of Object.entries(l.usage_by_step)) this.byStep.set(step, addUsage(this.byStep.get(step), u));
    if (l.task === 'augment' && l.augmentation) {
      this.augmentation.inputsProposed += l.augmentation.proposed;
      if (l.augmentation.scriptKey) {
        this.augmentation.functionsAugmented += 1;
        this.augmentation.inputsKept += l.augmentation.kept;
      }
    }
    // Augmentation samples nothing: its lines count only for what they augmented.
    const sampled = l.task !== 'augment';
    this.countHarness(l);
    if (l.error !== null || (sampled && l.n === 0)) {
      this.errorCount += 1;
      if (this.errors.length < MAX_LISTED) this.errors.push({ functionId: l.function_id, error: l.error ?? 'no sample could be evaluated' });
      return;
    }
    // (a function that could not be evaluated is counted once, above, not again per failed step)
    for (const e of l.step_errors) {
      this.stepErrorCount += 1;
      if (this.stepErrors.length < MAX_LISTED) this.stepErrors.push({ functionId: l.function_id, error: e });
    }
    if (!sampled) return;
    this.evaluated += 1;
    this.samples += l.n;
    const passedBy = (round: number) => l.passed_per_round[Math.min(round, l.passed_per_round.length - 1)] ?? 0;
    this.passByRound.forEach((table, r) => table.add(l.n, passedBy(r)));

    const repo = this.byRepo.get(l.repo_name) ?? { functions: 0, pass: new PassTable(this.ks), final: new PassTable([1]) };
    repo.functions += 1;
    repo.pass.add(l.n, passedBy(0));
    repo.final.add(l.n, passedBy(this.rounds));
    this.byRepo.set(l.repo_name, repo);
    if (l.has_docstring) {
      this.withDoc.functions += 1;
      this.withDoc.pass.add(l.n, passedBy(0));
    }

    for (const s of l.samples) {
      const first = s.rounds[0];
      const last = s.rounds[s.rounds.length - 1];
      for (const [when, r] of [['initial', first], ['final', last]] as const) {
        if (!r || r.passed || !r.kind) continue;
        this.failureKinds[when][r.kind] += 1;
        if (r.exception_type) this.exceptionTypes[when][r.exception_type] = (this.exceptionTypes[when][r.exception_type] ?? 0) + 1;
      }
    }

    if (l.ranking) {
      this.rankedFunctions += 1;
      for (const m of RANKING_METHODS) {
        const per = l.ranking.methods[m];
        const totals = this.ranking.get(m) ?? { hit: new Means(), precision: new Means() };
        for (const [k, v] of Object.entries(per.hitAtK)) totals.hit.add(k, v);
        for (const [k, v] of Object.entries(per.precisionAtK)) totals.precision.add(k, v);
        this.ranking.set(m, totals);
      }
    }

    if (l.task === 'rft') {
      if (passedBy(0) > 0) this.training.initial += 1;
      if (passedBy(this.rounds) > 0) this.training.afterRepair += 1;
      const t = l.training;
      if (t) {
        this.training.examples += t.examples;
        if (t.examples > 0) this.training.groundTruthExamples += 1;
        this.training.duplicates += t.duplicates;
        this.training.unparsable += t.unparsable;
      }
    }
  }

  /** The harness's failures of a line, whether or not its function could be evaluated. */
  private countHarness(l: EvalLine): void {
    let any = false;
    for (const s of l.samples) {
      if (s.rounds.some((r) => r.dropped_imports.length > 0)) this.harness.samplesWithDroppedImports += 1;
      s.rounds.forEach((r) => {
        if (r.kind !== 'harness') return;
        any = true;
        if (r.round === 0) this.harness.samples += 1;
        else this.harness.repairRounds += 1;
        if (this.harness.examples.length < MAX_LISTED) this.harness.examples.push({ functionId: l.function_id, summary: r.summary });
      });
    }
    if (any) this.harness.functions += 1;
  }

  result(): EvalSummary {
    const { settings } = this.meta;
    const methods = settings.select === 'random' ? (['random'] as const) : RANKING_METHODS;
    const ranking: EvalSummary['ranking'] =
      settings.select === 'none' || this.rankedFunctions === 0
        ? null
        : {
            selected: settings.select,
            methods: Object.fromEntries(
              methods.map((m) => {
                const totals = this.ranking.get(m)!;
                return [m, { functions: this.rankedFunctions, hitAtK: totals.hit.result() as Record<string, number>, precisionAtK: totals.precision.result() }];
              }),
            ) as Partial<Record<RankingMethod, RankingTotals>>,
          };
    const t = this.training;
    return {
      runId: this.meta.runId,
      task: settings.task,
      model: this.meta.model,
      settings,
      dataset: this.meta.dataset,
      functions: this.functions,
      evaluated: this.evaluated,
      errors: this.errors,
      errorCount: this.errorCount,
      stepErrors: this.stepErrors,
      stepErrorCount: this.stepErrorCount,
      missing: Math.max(0, this.meta.dataset.functions - this.functions),
      samples: this.samples,
      passAtK: this.passByRound[0]!.result(),
      passAtKByRound: this.passByRound.map((p) => p.result()),
      byRepository: Object.fromEntries(
        [...this.byRepo].sort(([a], [b]) => a.localeCompare(b)).map(([repo, r]) => [repo, { functions: r.functions, passAtK: r.pass.result(), finalPassAt1: r.final.result()['pass@1'] ?? null }]),
      ),
      withDocstring: { functions: this.withDoc.functions, passAtK: this.withDoc.pass.result() },
      failureKinds: this.failureKinds,
      harness: this.harness,
      exceptionTypes: this.exceptionTypes,
      ranking,
      training: settings.task === 'rft' ? { functionsWithPassing: { initial: t.initial, afterRepair: t.afterRepair }, examples: t.examples, groundTruthExamples: t.groundTruthExamples, duplicates: t.duplicates, unparsable: t.unparsable } : null,
      augmentation: settings.task === 'augment' ? { ...this.augmentation } : null,
      usage: { total: this.total, byStep: Object.fromEntries([...this.byStep].sort(([a], [b]) => a.localeCompare(b))) },
    };
  }
}

/** The summary of lines held in memory (tests, a combined report). */
export function summarize(lines: Iterable<EvalLine>, meta: SummaryMeta): EvalSummary {
  const builder = new EvalSummaryBuilder(meta);
  for (const l of lines) builder.add(l);
  return builder.result();
}
