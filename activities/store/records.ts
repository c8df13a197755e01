/**
 * The record the store keeps for each function of a run, written once when the function ends
 * (an upsert keyed by run and function id): the function's reference, and either the accepted
 * record (a `dataset.jsonl` line: RepoST's published fields, then this factory's) or the
 * rejection with its stage and reason. The dataset steps build these; the store validates them.
 */
import { z } from 'zod';
import type { FunctionRef } from '../contracts';

export const SplitSchema = z.enum(['train', 'eval']);

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
  /** When that commit was made (ISO 8601): the script's packages were resolved as of it. Null when unknown; absent in older records. */
  commit_date: z.string().nullable().optional(),
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
  /**
   * The distributions the script ran with. `as_of`: the cutoff its version was chosen as of (the
   * commit's date plus the grace period); null: its newest release (no date, or none installable
   * by then). Absent in records written before versions followed the commit's date.
   */
  packages: z.array(z.object({ name: z.string(), version: z.string(), as_of: z.string().nullable().optional() })),
  prompt_versions: z.record(z.string(), z.string()),
  debug_rounds: z.number().int(),
  coverage_rounds: z.number().int(),
  llm_tokens: z.number(),
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
  commitDate: z.string().nullable().optional(),
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
