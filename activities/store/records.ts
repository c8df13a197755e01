/**
 * The record the store keeps for each function of a run, written once when the function ends
 * (an upsert keyed by run and function id): the function's reference, and either the accepted
 * record (a `dataset.jsonl` line: RepoST's published fields, then this factory's) or the
 * rejection with its stage and reason. The dataset steps build these; the store validates them.
 * A class environment's record (a `classes-dataset.jsonl` line) is kept the same way, marked
 * `kind: 'class'`; its id is a class id, which never equals a function id.
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

/** A record's test-strength fields (function and class records alike): null when the run did not measure it (written on every record; absent in records written before it existed). */
const TEST_STRENGTH_FIELDS = {
  /** Killed / run of the target's mutants (each placed as the new implementation). */
  mutation_score: z.number().min(0).max(1).nullable().optional(),
  /** Mutants made, killed (timed-out ones included), survived, timed out and not run. */
  /** `left_out`: mutants no allowed test can see (output, message, equivalent), never run; see activities/sandbox/mutation.ts. */
  mutants: z
    .object({
      made: z.number().int(),
      killed: z.number().int(),
      survived: z.number().int(),
      timed_out: z.number().int(),
      not_run: z.number().int(),
      left_out: z.object({ output: z.number().int(), message: z.number().int(), equivalent: z.number().int() }).optional(),
    })
    .nullable()
    .optional(),
  /** The surviving mutants' diffs, for a person to judge (an equivalent mutant cannot be told apart automatically). */
  mutation_survivors: z.string().nullable().optional(),
  /** The score this record had to reach (null: no minimum applied). */
  mutation_min_score: z.number().nullable().optional(),
  mutation_rounds: z.number().int().optional(),
  /** The stability check's verdict (null: not checked); a flaky record is here only when the run kept flaky records. */
  stability: z.enum(['stable', 'flaky']).nullable().optional(),
  stability_reason: z.string().nullable().optional(),
};

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
   * Names the code in `orig_context` uses that it does not supply: local definitions left out
   * (`path::qualname`: for the token budget, the closure depth, or never reached), names that
   * resolve nowhere, dynamic lookups that reach nothing by name. Absent in records written before it was kept.
   */
  context_unsupplied: z.array(z.string()).optional(),
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
  ...TEST_STRENGTH_FIELDS,
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

export const DOCUMENTATION_LEVELS = ['full', 'partial', 'none'] as const;

/**
 * One line of `classes-dataset.jsonl`: the function record's fields at class level (`class_name`,
 * `class_path`, `orig_class`, `class_id`, ...), the tests the script holds, coverage over the
 * class's methods overall and per method, then the class's skeleton, documentation level and
 * metrics as the class corpus records them (`classes.jsonl`).
 */
export const ClassDatasetRecordSchema = z.object({
  class_name: z.string(),
  idx: z.string(),
  repo_name: z.string(),
  class_path: z.string(),
  orig_class: z.string(),
  orig_context: z.string(),
  eval_script: z.string(),
  /** The script's test functions (top-level `test_...`): what the per-test pass rate counts. */
  test_functions: z.array(z.string()),
  /** Over all the class's methods: branch (arc) rate when they have branches, else line rate. */
  coverage_rate: z.number().nullable(),
  coverage_report: z.string(),
  method_coverage: z.array(z.object({ method: z.string(), rate: z.number(), line_rate: z.number(), branch_rate: z.number().nullable(), has_branches: z.boolean() })),
  sandbox_ast_check: z.boolean().nullable(),
  sandbox_functionality_check: z.string().nullable(),
  test_correctness_check: z.string().nullable(),
  commit_id: z.string(),
  /** When that commit was made (ISO 8601), as a function record has it: the script's packages were resolved as of it. Null when unknown; absent in records written before class targets carried it. */
  commit_date: z.string().nullable().optional(),
  qualname: z.string(),
  class_id: z.string(),
  run_id: z.string(),
  split: SplitSchema,
  coverage_threshold: z.number(),
  ast_check_required: z.boolean(),
  license: z.string().nullable(),
  /** Where `license` came from, as a function record has it; null in records written before it was kept. */
  license_source: z.string().nullable().default(null),
  standalone: z.boolean().nullable(),
  /**
   * Names the code in `orig_context` uses that it does not supply: local definitions left out
   * (`path::qualname`: for the token budget, the closure depth, or never reached), names that
   * resolve nowhere, dynamic lookups that reach nothing by name. Absent in records written before it was kept.
   */
  context_unsupplied: z.array(z.string()).optional(),
  /** As a function record has them: `as_of` the cutoff its version was chosen as of; absent in older records. */
  packages: z.array(z.object({ name: z.string(), version: z.string(), as_of: z.string().nullable().optional() })),
  prompt_versions: z.record(z.string(), z.string()),
  debug_rounds: z.number().int(),
  coverage_rounds: z.number().int(),
  llm_tokens: z.number(),
  /** Its methods (those of nested classes as `Inner.method`). */
  methods: z.array(z.string()),
  class_skeleton: z.string(),
  documentation_level: z.enum(DOCUMENTATION_LEVELS),
  /** The class corpus's metrics (its README defines each), by their record keys. */
  metrics: z.record(z.string(), z.number().nullable()),
  method_metrics: z.array(z.object({ name: z.string(), line: z.number().int(), cyclomatic: z.number().int(), essential: z.number().int(), max_nesting: z.number().int() })),
  ...TEST_STRENGTH_FIELDS,
});
export type ClassDatasetRecord = z.infer<typeof ClassDatasetRecordSchema>;

/** What a replay needs to run the function (or class) again. */
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
  kind: z.enum(['function', 'class']).optional(),
  licenseSource: z.string().optional(),
});

const settingsKey = z.string().optional();

const FunctionStoredSchema = z.discriminatedUnion('accepted', [
  z.object({ kind: z.literal('function').optional(), accepted: z.literal(true), fn: FunctionRefSchema, record: DatasetRecordSchema, settingsKey }),
  z.object({ kind: z.literal('function').optional(), accepted: z.literal(false), fn: FunctionRefSchema, rejection: RejectionSchema, settingsKey }),
]);

const ClassStoredSchema = z.discriminatedUnion('accepted', [
  z.object({ kind: z.literal('class'), accepted: z.literal(true), fn: FunctionRefSchema, record: ClassDatasetRecordSchema, settingsKey }),
  z.object({ kind: z.literal('class'), accepted: z.literal(false), fn: FunctionRefSchema, rejection: RejectionSchema, settingsKey }),
]);

/** A function's record, or (marked `kind: 'class'`) a class environment's. */
export const StoredRecordSchema = z.union([ClassStoredSchema, FunctionStoredSchema]);
export type StoredRecord = z.infer<typeof StoredRecordSchema>;
export type FunctionStoredRecord = z.infer<typeof FunctionStoredSchema>;
export type ClassStoredRecord = z.infer<typeof ClassStoredSchema>;

/** Whether a stored record is a class environment's. */
export function isClassRecord(r: StoredRecord): r is ClassStoredRecord {
  return r.kind === 'class';
}

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
