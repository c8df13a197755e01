/**
 * One function's line of `eval.jsonl`: its samples round by round (candidate, outcome, failure
 * kind, tokens), how many passed after each self-repair round, Pass@k, and when asked for, the
 * ranking, training-data and augmentation results. Lines are read back (summary, report,
 * training data) through the schema.
 */
import { z } from 'zod';
import { addUsage, emptyUsage, UsageSchema, type Usage } from '../store/usage';
import type { FunctionEvalResult, FunctionEvalSummary, SampleTrace } from './contracts';
import type { EvalRecord } from './dataset';
import { FAILURE_KINDS } from './outcome';
import { passAtK } from './pass-at-k';
import { type EvalSettings, effectiveKs } from './settings';

const RoundSchema = z.object({
  round: z.number().int(),
  passed: z.boolean(),
  kind: z.enum(FAILURE_KINDS).nullable(),
  exception_type: z.string().nullable(),
  summary: z.string(),
  candidate: z.string().nullable(),
  bare: z.boolean(),
  duration_ms: z.number(),
  usage: UsageSchema,
  /** Preamble imports the harness left out (the script defines their names, or they are the repository's own). */
  dropped_imports: z.array(z.string()).default([]),
});

const MethodRankingSchema = z.object({
  hitAtK: z.record(z.string(), z.number()),
  precisionAtK: z.record(z.string(), z.number().nullable()),
  top: z.number().int().nullable(),
});

export const EvalLineSchema = z.object({
  function_id: z.string(),
  idx: z.string(),
  repo_name: z.string(),
  func_path: z.string(),
  func_name: z.string(),
  task: z.string(),
  model: z.string(),
  docstring_mode: z.string(),
  /** The description the prompt carried (`missing`: the original had none). */
  docstring: z.string().nullable(),
  has_docstring: z.boolean(),
  error: z.string().nullable(),
  /** Steps that failed for good while the rest was kept (a sample's call, the ranking, the training targets). */
  step_errors: z.array(z.string()),
  /**
   * Samples with an outcome: a sample whose first answer or run failed for good is left out, and
   * so is one whose first run the harness failed (`harness_failures`).
   */
  n: z.number().int(),
  /** Samples whose first run the harness failed: not the model's failures, left out of `n`. */
  harness_failures: z.number().int().default(0),
  /** Samples that had passed by the end of round 0, 1, ... (self-repair rounds). */
  passed_per_round: z.array(z.number().int()),
  pass_at_k: z.record(z.string(), z.number()),
  pass_at_k_per_round: z.array(z.record(z.string(), z.number())),
  samples: z.array(z.object({ sample: z.number().int(), rounds: z.array(RoundSchema), error: z.string().nullable() })),
  usage: UsageSchema,
  usage_by_step: z.record(z.string(), UsageSchema),
  ranking: z
    .object({
      tests: z.number().int(),
      testsTruthPasses: z.number().int(),
      methods: z.object({ genx: MethodRankingSchema, codet: MethodRankingSchema, random: MethodRankingSchema }),
      genxIterations: z.number().int(),
      genxConverged: z.boolean(),
    })
    .nullable(),
  training: z.object({ examples: z.number().int(), duplicates: z.number().int(), unparsable: z.number().int(), examplesKey: z.string().nullable() }).nullable(),
  augmentation: z.object({ proposed: z.number().int(), kept: z.number().int(), note: z.string(), scriptKey: z.string().nullable() }).nullable(),
});
export type EvalLine = z.infer<typeof EvalLineSchema>;

/**
 * The samples that count for Pass@k: those with an outcome of the model's. A sample whose first
 * run the harness failed says nothing about the model and is left out, like one whose first step
 * failed for good; one whose repair round the harness failed keeps its earlier rounds.
 */
export function scoredSamples(samples: readonly SampleTrace[]): SampleTrace[] {
  return samples.filter((s) => s.rounds.length > 0 && s.rounds[0]!.run.kind !== 'harness');
}

/** Samples that had passed by the end of each round, for `rounds` rounds (0 = first answers). */
export function passedPerRound(samples: readonly SampleTrace[], rounds: number): number[] {
  return Array.from({ length: rounds + 1 }, (_, r) => samples.filter((s) => s.rounds.some((x) => x.round <= r && x.run.passed)).length);
}

export function passAtKRecord(n: number, c: number, ks: readonly number[]): Record<string, number> {
  return Object.fromEntries(ks.filter((k) => k <= n).map((k) => [`pass@${k}`, passAtK(n, c, k)]));
}

export interface LineContext {
  record: EvalRecord;
  settings: EvalSettings;
  /** The model that answered (the run's, or the configured default). */
  model: string;
  /** Candidate texts by artifact key. */
  candidates: ReadonlyMap<string, { code: string; bare: boolean }>;
}

export function evalLineOf(result: FunctionEvalResult, ctx: LineContext): EvalLine {
  const { record, settings } = ctx;
  const ks = effectiveKs(settings);
  // Only samples with an outcome of the model's count (see `scoredSamples`).
  const scored = scoredSamples(result.samples);
  const n = scored.length;
  const perRound = passedPerRound(scored, settings.repairRounds);
  const stepErrors = [...result.samples.filter((s) => s.error).map((s) => `sample ${s.sample}: ${s.error}`), ...result.stepErrors];
  const roundUsage = (which: (round: number) => boolean): Usage =>
    addUsage(...result.samples.flatMap((s) => s.rounds.filter((r) => which(r.round)).map((r) => r.usage)));
  const byStep: Record<string, Usage> = {
    docstring: addUsage(result.prompt?.usage, result.unusedDocstringUsage),
    solve: roundUsage((r) => r === 0),
    repair: roundUsage((r) => r > 0),
    candidate_tests: result.rankingUsage ?? emptyUsage(),
    test_inputs: result.augmentation?.usage ?? emptyUsage(),
  };
  return {
    function_id: record.functionId,
    idx: record.idx,
    repo_name: record.repo,
    func_path: record.path,
    func_name: record.qualname,
    task: settings.task,
    model: ctx.model,
    docstring_mode: settings.docstring,
    docstring: result.prompt?.docstring ?? null,
    has_docstring: result.prompt?.hasOriginalDocstring ?? false,
    error: result.error,
    step_errors: stepErrors,
    n,
    harness_failures: result.samples.filter((s) => s.rounds[0]?.run.kind === 'harness').length,
    passed_per_round: n > 0 ? perRound : [],
    pass_at_k: n > 0 ? passAtKRecord(n, perRound[0]!, ks) : {},
    pass_at_k_per_round: n > 0 ? perRound.map((c) => passAtKRecord(n, c, ks)) : [],
    samples: result.samples.map((s) => ({
      sample: s.sample,
      rounds: s.rounds.map((r) => {
        const cand = r.candidateKey ? ctx.candidates.get(r.candidateKey) : undefined;
        return {
          round: r.round,
          passed: r.run.passed,
          kind: r.run.kind,
          exception_type: r.run.exceptionType,
          summary: r.run.summary,
          candidate: cand?.code ?? null,
          bare: cand?.bare ?? false,
          duration_ms: r.run.durationMs,
          usage: r.usage,
          dropped_imports: r.run.dropped ?? [],
        };
      }),
      error: s.error,
    })),
    usage: addUsage(...Object.values(byStep)),
    usage_by_step: byStep,
    ranking: result.ranking,
    training: result.training,
    augmentation: result.augmentation ? { proposed: result.augmentation.proposed, kept: result.augmentation.kept, note: result.augmentation.note, scriptKey: result.augmentation.scriptKey } : null,
  };
}

/** What a function's workflow returns to the run: its counts, the rest is in the store. */
export function functionEvalSummary(result: FunctionEvalResult): FunctionEvalSummary {
  return {
    functionId: result.functionId,
    samples: scoredSamples(result.samples).length,
    passedInitially: result.samples.filter((s) => s.rounds[0]?.run.passed).length,
    passedFinally: result.samples.filter((s) => s.rounds.some((r) => r.run.passed)).length,
    error: result.error,
  };
}
