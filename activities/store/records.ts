/**
 * The record the store keeps for each function of a run, written once when the function ends
 * (an upsert keyed by run and function id): the function's reference, and either the accepted
 * record (a `dataset.jsonl` line: RepoST's published fields, then this factory's) or the
 * rejection with its stage and reason. The dataset steps build these; the store validates them.
 */
import { z } from 'zod';
import type { FunctionRef } from '../contracts';

export const SplitSchema = z.enum(['train', 'eval']);

/** A record's solvability: implementations from the prompt alone, and what was removed from its tests. */
export const SolvabilityRecordSchema = z.object({
  model: z.string(),
  /** Implementations scored (those asked for, less any whose step failed for good or that the harness failed). */
  samples: z.number().int(),
  /** Those passing the tests as they end up, and as they were before any assertion was removed. */
  passed: z.number().int(),
  passed_initially: z.number().int(),
  /** Where the prompt's description came from. */
  docstring: z.enum(['original', 'generated']),
  /** The setting for a function without a docstring: a generated one, or the record left out. */
  missing_docstring: z.enum(['generate', 'exclude']),
  /** Failing assertions put to the judge, and those removed (line and text in the script as it was then). */
  judged: z.number().int(),
  removed_assertions: z.array(z.object({ line: z.number().int(), text: z.string() })),
});
export type SolvabilityRecord = z.infer<typeof SolvabilityRecordSchema>;

/** One line of `dataset.jsonl`: RepoST's published fields first, then what this factory adds. */
export const DatasetRecordSchema = z.object({
  /** As RepoST writes it: the qualified name (`Interval.merge` for a method). */
  func_name: z.string(),
  idx: z.string(),
  repo_name: z.string(),
  func_path: z.string(),
  orig_func: z.string(),
  orig_context: z.string(),
  eval_script: z.string(),
  coverage_rate: z.number().nullable(),
  coverage_report: z.string(),
  sandbox_ast_check: z.boolean().nullable(),
  sandbox_functionality_check: z.string().nullable(),
  test_correctness_check: z.string().nullable(),
  commit_id: z.string(),
  // Our additions.
  qualname: z.string(),
  function_id: z.string(),
  run_id: z.string(),
  split: SplitSchema,
  /** The thresholds that applied to this record (RepoST: 0.8 and no AST requirement for train, 1.0 and AST equality for eval). */
  coverage_threshold: z.number(),
  ast_check_required: z.boolean(),
  license: z.string().nullable(),
  /** Where `license` came from: `github-api`, `file:<name>` (the repository's license file), `none`; null in records written before it was kept. */
  license_source: z.string().nullable().default(null),
  standalone: z.boolean().nullable(),
  packages: z.array(z.object({ name: z.string(), version: z.string() })),
  prompt_versions: z.record(z.string(), z.string()),
  debug_rounds: z.number().int(),
  coverage_rounds: z.number().int(),
  llm_tokens: z.number(),
  // Test strength: null when the run did not measure it (written on every record; absent in records written before it existed).
  /** Killed / run of the target's mutants (each placed as the new implementation). */
  mutation_score: z.number().min(0).max(1).nullable().optional(),
  /** Mutants made, killed (timed-out ones included), survived, timed out and not run. */
  mutants: z.object({ made: z.number().int(), killed: z.number().int(), survived: z.number().int(), timed_out: z.number().int(), not_run: z.number().int() }).nullable().optional(),
  /** The surviving mutants' diffs, for a person to judge (an equivalent mutant cannot be told apart automatically). */
  mutation_survivors: z.string().nullable().optional(),
  /** The score this record had to reach (null: no minimum applied). */
  mutation_min_score: z.number().nullable().optional(),
  mutation_rounds: z.number().int().optional(),
  /** The stability check's verdict (null: not checked); a flaky record is here only when the run kept flaky records. */
  stability: z.enum(['stable', 'flaky']).nullable().optional(),
  stability_reason: z.string().nullable().optional(),
  /**
   * The solvability stage (evaluation records): of the implementations a model wrote from the
   * prompt alone, the share that passes the tests; null when the record's split does not go
   * through it (optional: records written before it existed have none).
   */
  solve_rate: z.number().min(0).max(1).nullable().optional(),
  /** How the solve rate came about, and the assertions removed as checking behaviour the prompt does not determine. */
  solvability: SolvabilityRecordSchema.nullable().optional(),
  /** The description written from the ground truth for a function without a docstring; its prompt shows it. */
  generated_docstring: z.string().nullable().optional(),
});
export type DatasetRecord = z.infer<typeof DatasetRecordSchema>;

export const RejectionSchema = z.object({
  function_id: z.string(),
  repo_name: z.string(),
  func_path: z.string(),
  qualname: z.string(),
  split: SplitSchema,
  stage: z.string(),
  reason: z.string(),
  debug_rounds: z.number().int(),
  coverage_rounds: z.number().int(),
  llm_tokens: z.number(),
  mutation_rounds: z.number().int().optional(),
  /** The mutation score the script reached, when it was scored. */
  mutation_score: z.number().nullable().optional(),
});
export type Rejection = z.infer<typeof RejectionSchema>;

/** What a replay needs to run the function again. */
export const FunctionRefSchema: z.ZodType<FunctionRef> = z.object({
  functionId: z.string(),
  repoId: z.string(),
  commit: z.string(),
  path: z.string(),
  qualname: z.string(),
  name: z.string(),
  occurrence: z.number().int().positive().optional(),
  split: SplitSchema,
  license: z.string().nullable(),
  licenseSource: z.string().optional(),
});

export const StoredRecordSchema = z.discriminatedUnion('accepted', [
  z.object({ accepted: z.literal(true), fn: FunctionRefSchema, record: DatasetRecordSchema, settingsKey: z.string().optional() }),
  z.object({ accepted: z.literal(false), fn: FunctionRefSchema, rejection: RejectionSchema, settingsKey: z.string().optional() }),
]);
export type StoredRecord = z.infer<typeof StoredRecordSchema>;

/**
 * The rounds that ran: how many functions had at least one debug (coverage) round, and how many
 * rounds they had in all. The funnel counts a function as reaching the debug and coverage stages
 * once it passed the stages before them, whether or not a round was needed; these say how many
 * needed one.
 */
export interface RoundsRan {
  debug: { functions: number; rounds: number };
  coverage: { functions: number; rounds: number };
}

export function emptyRoundsRan(): RoundsRan {
  return { debug: { functions: 0, rounds: 0 }, coverage: { functions: 0, rounds: 0 } };
}

/** Counts one function's rounds into `totals` (in place). */
export function addRoundsRan(totals: RoundsRan, r: { debug_rounds: number; coverage_rounds: number }): RoundsRan {
  if (r.debug_rounds > 0) totals.debug.functions += 1;
  totals.debug.rounds += r.debug_rounds;
  if (r.coverage_rounds > 0) totals.coverage.functions += 1;
  totals.coverage.rounds += r.coverage_rounds;
  return totals;
}
