/**
 * `eval-summary.json`: the run's numbers from its `eval.jsonl` lines. Pass@k is the mean over
 * evaluated functions (those without an error); per self-repair round, per repository, on the
 * subset with an original docstring (RepoST's Table 8), failure kinds of first answers and of
 * final ones, the ranking methods' n@k and Pr@k, tokens and cost per step.
 */
import type { Usage } from './contracts';
import type { DatasetFormat } from './dataset';
import { FAILURE_KINDS, type FailureKind } from './outcome';
import { passAtK } from './pass-at-k';
import { RANKING_METHODS, type RankingMethod } from './ranking';
import type { EvalLine } from './results';
import { type EvalSettings, effectiveKs } from './settings';
import { addUsages } from './usage';

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
  dataset: { file: string; format: DatasetFormat | 'mixed'; functions: number };
  functions: number;
  evaluated: number;
  errors: { functionId: string; error: string }[];
  samples: number;
  passAtK: Record<string, number | null>;
  /** Pass@k after each self-repair round (round 0 = first answers). */
  passAtKByRound: Record<string, number | null>[];
  byRepository: Record<string, { functions: number; passAtK: Record<string, number | null>; finalPassAt1: number | null }>;
  withDocstring: { functions: number; passAtK: Record<string, number | null> };
  failureKinds: { initial: Record<FailureKind, number>; final: Record<FailureKind, number> };
  exceptionTypes: { initial: Record<string, number>; final: Record<string, number> };
  /** The methods scored: all three on the candidate-test matrix, or random alone (no tests written). */
  ranking: { selected: EvalSettings['select']; methods: Partial<Record<RankingMethod, RankingTotals>> } | null;
  training: { functionsWithPassing: { initial: number; afterRepair: number }; examples: number; groundTruthExamples: number; duplicates: number; unparsable: number } | null;
  augmentation: { functionsAugmented: number; inputsProposed: number; inputsKept: number } | null;
  usage: { total: Usage; byStep: Record<string, Usage> };
}

type Counted = { n: number; c: number };

function meanPass(fns: readonly Counted[], k: number): number | null {
  const ok = fns.filter((f) => f.n >= k);
  return ok.length ? ok.reduce((s, f) => s + passAtK(f.n, f.c, k), 0) / ok.length : null;
}

function passTable(fns: readonly Counted[], ks: readonly number[]): Record<string, number | null> {
  return Object.fromEntries(ks.map((k) => [`pass@${k}`, meanPass(fns, k)]));
}

function zeroKinds(): Record<FailureKind, number> {
  return Object.fromEntries(FAILURE_KINDS.map((k) => [k, 0])) as Record<FailureKind, number>;
}

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

export interface SummaryMeta {
  runId: string;
  model: string;
  settings: EvalSettings;
  datasetFile: string;
  datasetFormat: DatasetFormat | 'mixed';
  datasetFunctions: number;
}

export function summarize(lines: readonly EvalLine[], meta: SummaryMeta): EvalSummary {
  const { settings } = meta;
  const ks = effectiveKs(settings);
  const ok = lines.filter((l) => l.error === null && l.n > 0);
  const counted = (l: EvalLine, round: number): Counted => ({ n: l.n, c: l.passed_per_round[Math.min(round, l.passed_per_round.length - 1)] ?? 0 });
  const rounds = settings.repairRounds;

  const byRepo: EvalSummary['byRepository'] = {};
  for (const repo of [...new Set(ok.map((l) => l.repo_name))].sort()) {
    const mine = ok.filter((l) => l.repo_name === repo);
    byRepo[repo] = { functions: mine.length, passAtK: passTable(mine.map((l) => counted(l, 0)), ks), finalPassAt1: meanPass(mine.map((l) => counted(l, rounds)), 1) };
  }

  const failureKinds = { initial: zeroKinds(), final: zeroKinds() };
  const exceptionTypes = { initial: {} as Record<string, number>, final: {} as Record<string, number> };
  for (const l of ok) {
    for (const s of l.samples) {
      const first = s.rounds[0];
      const last = s.rounds[s.rounds.length - 1];
      for (const [when, r] of [['initial', first], ['final', last]] as const) {
        if (!r || r.passed || !r.kind) continue;
        failureKinds[when][r.kind] += 1;
        if (r.exception_type) exceptionTypes[when][r.exception_type] = (exceptionTypes[when][r.exception_type] ?? 0) + 1;
      }
    }
  }

  const ranked = ok.filter((l) => l.ranking !== null);
  const ranking: EvalSummary['ranking'] =
    settings.select === 'none' || ranked.length === 0
      ? null
      : {
          selected: settings.select,
          methods: Object.fromEntries(
            (settings.select === 'random' ? (['random'] as const) : RANKING_METHODS).map((m) => {
              const per = ranked.map((l) => l.ranking!.methods[m]);
              const hitKeys = [...new Set(per.flatMap((p) => Object.keys(p.hitAtK)))];
              const prKeys = [...new Set(per.flatMap((p) => Object.keys(p.precisionAtK)))];
              return [
                m,
                {
                  functions: per.length,
                  hitAtK: Object.fromEntries(hitKeys.map((k) => [k, mean(per.filter((p) => k in p.hitAtK).map((p) => p.hitAtK[k]!))])),
                  precisionAtK: Object.fromEntries(
                    prKeys.map((k) => {
                      const vals = per.map((p) => p.precisionAtK[k]).filter((v): v is number => typeof v === 'number');
                      return [k, vals.length ? mean(vals) : null];
                    }),
                  ),
                },
              ];
            }),
          ) as Partial<Record<RankingMethod, RankingTotals>>,
        };

  const training: EvalSummary['training'] =
    settings.task === 'rft'
      ? {
          functionsWithPassing: { initial: ok.filter((l) => (l.passed_per_round[0] ?? 0) > 0).length, afterRepair: ok.filter((l) => (l.passed_per_round[rounds] ?? 0) > 0).length },
          examples: ok.reduce((s, l) => s + (l.training?.examples ?? 0), 0),
          groundTruthExamples: ok.filter((l) => (l.training?.examples ?? 0) > 0).length,
          duplicates: ok.reduce((s, l) => s + (l.training?.duplicates ?? 0), 0),
          unparsable: ok.reduce((s, l) => s + (l.training?.unparsable ?? 0), 0),
        }
      : null;

  const augmentation: EvalSummary['augmentation'] =
    settings.task === 'augment'
      ? {
          functionsAugmented: lines.filter((l) => l.augmentation?.scriptKey).length,
          inputsProposed: lines.reduce((s, l) => s + (l.augmentation?.proposed ?? 0), 0),
          inputsKept: lines.reduce((s, l) => s + (l.augmentation?.scriptKey ? l.augmentation.kept : 0), 0),
        }
      : null;

  const steps = [...new Set(lines.flatMap((l) => Object.keys(l.usage_by_step)))];
  const withDoc = ok.filter((l) => l.has_docstring);
  return {
    runId: meta.runId,
    task: settings.task,
    model: meta.model,
    settings,
    dataset: { file: meta.datasetFile, format: meta.datasetFormat, functions: meta.datasetFunctions },
    functions: lines.length,
    evaluated: ok.length,
    errors: lines.filter((l) => l.error !== null).map((l) => ({ functionId: l.function_id, error: l.error! })),
    samples: ok.reduce((s, l) => s + l.n, 0),
    passAtK: passTable(ok.map((l) => counted(l, 0)), ks),
    passAtKByRound: Array.from({ length: rounds + 1 }, (_, r) => passTable(ok.map((l) => counted(l, r)), ks)),
    byRepository: byRepo,
    withDocstring: { functions: withDoc.length, passAtK: passTable(withDoc.map((l) => counted(l, 0)), ks) },
    failureKinds,
    exceptionTypes,
    ranking,
    training,
    augmentation,
    usage: {
      total: addUsages(...lines.map((l) => l.usage)),
      byStep: Object.fromEntries(steps.map((s) => [s, addUsages(...lines.map((l) => l.usage_by_step[s]))])),
    },
  };
}
