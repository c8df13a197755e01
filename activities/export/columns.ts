/**
 * The columns of the exported dataset, in one table from which the Parquet schema, the column
 * data and the Hugging Face `features` of the dataset card are all derived, so they cannot
 * disagree. RepoST's published fields come first with their meaning unchanged, then what this
 * factory adds. The split is not a column: each split is its own file.
 */
import type { ProductRecord } from '../dataset/product-record';
import { licenseOf } from '../dataset/product-record';
import type { DatasetRecord } from '../store/records';
import { columnData as tableColumnData, huggingFaceFeatures as tableFeatures, parquetSchema as tableParquetSchema, type ColumnType, type Scalar, type TableColumn } from '../tables/columns';

export type { ColumnType, Scalar, TableColumn };

/** What the test-strength columns read of a record (function and class records alike). */
type TestStrengthRecord = Pick<DatasetRecord, 'mutation_score' | 'mutants' | 'mutation_survivors' | 'mutation_rounds' | 'stability'>;

/** One column of an exported table of records `R` (the dataset's records unless said otherwise). */
export type ExportColumn<R = ProductRecord> = TableColumn<R>;

const str = (nullable = false): ColumnType => ({ kind: 'scalar', scalar: 'string', nullable });
const scalar = (s: Scalar, nullable: boolean): ColumnType => ({ kind: 'scalar', scalar: s, nullable });

/** Test strength, the same columns for function and class environments (null when the run did not measure it). */
export const TEST_STRENGTH_COLUMNS: readonly ExportColumn<TestStrengthRecord>[] = [
  { name: 'mutation_score', type: scalar('float64', true), description: "share of the target's mutants (small wrong changes, each placed as the new implementation) the tests reject", value: (r) => r.mutation_score ?? null },
  { name: 'mutants_made', type: scalar('int32', true), description: 'mutants made of the target (at most the cap)', value: (r) => r.mutants?.made ?? null },
  { name: 'mutants_killed', type: scalar('int32', true), description: 'mutants the tests rejected, timed-out ones included', value: (r) => r.mutants?.killed ?? null },
  { name: 'mutants_survived', type: scalar('int32', true), description: 'mutants the tests let pass', value: (r) => r.mutants?.survived ?? null },
  { name: 'mutants_timed_out', type: scalar('int32', true), description: 'mutants killed by the time limit', value: (r) => r.mutants?.timed_out ?? null },
  { name: 'mutants_left_out_output', type: scalar('int32', true), description: 'mutants left out because they change only printing, logging or warning calls (no allowed test may compare that output)', value: (r) => r.mutants?.left_out?.output ?? null },
  { name: 'mutants_left_out_message', type: scalar('int32', true), description: 'mutants left out because they change only the text of an exception message or a text that is only printed or logged', value: (r) => r.mutants?.left_out?.message ?? null },
  { name: 'mutants_left_out_equivalent', type: scalar('int32', true), description: "mutants left out because they compile to the target's own bytecode", value: (r) => r.mutants?.left_out?.equivalent ?? null },
  { name: 'mutation_survivors', type: str(true), description: 'the surviving mutants as diffs, for a person to judge (some may be equivalent to the target)', value: (r) => r.mutation_survivors ?? null },
  { name: 'mutation_rounds', type: scalar('int32', true), description: 'rounds asking for tests that kill surviving mutants', value: (r) => r.mutation_rounds ?? null },
  { name: 'stability', type: str(true), description: "whether the verdict held over runs with another hash seed, run folder and clock ('stable' or 'flaky')", value: (r) => r.stability ?? null },
];

/** What the context could not supply, the same column for function and class records (null in records written before it was kept). */
export const CONTEXT_UNSUPPLIED_COLUMN: ExportColumn<Pick<DatasetRecord, 'context_unsupplied'>> = {
  name: 'context_unsupplied',
  type: { kind: 'struct-list', fields: ['name'], nullable: true },
  description:
    "names the code in orig_context uses that it does not supply: local definitions left out for the token budget or the closure depth (path::qualname), names that resolve nowhere, dynamic lookups that show no name; empty when it supplies all, null in records written before it was kept",
  value: (r) => r.context_unsupplied?.map((name) => ({ name })) ?? null,
};

export const EXPORT_COLUMNS: readonly ExportColumn[] = [
  // RepoST's fields.
  { name: 'func_name', type: str(), description: 'qualified name of the target function, as RepoST writes it (Class.method for a method)', value: (r) => r.func_name },
  { name: 'idx', type: str(), description: "the example's id (RepoST's field; equals function_id)", value: (r) => r.idx },
  { name: 'repo_name', type: str(), description: 'source repository (owner/name on GitHub)', value: (r) => r.repo_name },
  { name: 'func_path', type: str(), description: "path of the function's file in the repository", value: (r) => r.func_path },
  { name: 'orig_func', type: str(), description: 'the target function as written in the repository (the ground truth)', value: (r) => r.orig_func },
  { name: 'orig_context', type: str(), description: 'its local dependencies as `## path` blocks: the repository context a model is given', value: (r) => r.orig_context },
  { name: 'eval_script', type: str(), description: 'the standalone evaluation script: the sandboxed function, its dependencies and equivalence tests against `<name>_new_implementation`', value: (r) => r.eval_script },
  { name: 'coverage_rate', type: scalar('float64', true), description: 'branch coverage (0..1) of the target reached by the tests', value: (r) => r.coverage_rate },
  { name: 'coverage_report', type: str(), description: 'the coverage measurement in words', value: (r) => r.coverage_report },
  { name: 'sandbox_ast_check', type: scalar('bool', true), description: 'whether the sandboxed function has the same AST as the original', value: (r) => r.sandbox_ast_check },
  { name: 'sandbox_functionality_check', type: str(true), description: "the LLM's functionality verdict when the ASTs differ ('same' admits it)", value: (r) => r.sandbox_functionality_check },
  { name: 'test_correctness_check', type: str(true), description: "the LLM's verdict on the tests ('yes' admits them)", value: (r) => r.test_correctness_check },
  { name: 'commit_id', type: str(), description: 'the commit the repository was pinned to', value: (r) => r.commit_id },
  // This factory's fields.
  { name: 'commit_date', type: str(true), description: "when that commit was made; the script's packages are the releases of then (see packages)", value: (r) => r.commit_date ?? null },
  { name: 'qualname', type: str(), description: 'qualified name of the function (Class.method for a method)', value: (r) => r.qualname },
  { name: 'function_id', type: str(), description: 'deterministic id from repository, commit, path and qualified name', value: (r) => r.function_id },
  { name: 'run_id', type: str(), description: 'the crawl that produced the record', value: (r) => r.run_id },
  { name: 'license', type: str(), description: "the source repository's license key, or 'unknown'", value: (r) => licenseOf(r) },
  { name: 'license_source', type: str(true), description: "where the license came from: 'github-api', 'file:<name>' (the repository's license file) or 'none'", value: (r) => r.license_source ?? null },
  { name: 'coverage_threshold', type: scalar('float64', true), description: 'the branch coverage the record had to reach', value: (r) => r.coverage_threshold ?? null },
  { name: 'ast_check_required', type: scalar('bool', true), description: 'whether equal ASTs were required (evaluation sets) rather than the LLM check', value: (r) => r.ast_check_required ?? null },
  { name: 'standalone', type: scalar('bool', true), description: 'whether the function has no local dependencies', value: (r) => r.standalone },
  CONTEXT_UNSUPPLIED_COLUMN,
  {
    name: 'packages',
    type: { kind: 'struct-list', fields: ['name', 'version', 'as_of'] },
    description: "third-party distributions installed for the script (with their dependencies); as_of: the cutoff the version was chosen as of (the commit's date plus a grace period), empty for the newest release",
    value: (r) => r.packages.map((p) => ({ name: p.name, version: p.version, as_of: p.as_of ?? '' })),
  },
  {
    name: 'prompt_versions',
    type: { kind: 'struct-list', fields: ['step', 'version'] },
    description: 'the prompt template and version used at each step',
    value: (r) => Object.entries(r.prompt_versions).sort(([a], [b]) => a.localeCompare(b)).map(([step, version]) => ({ step, version })),
  },
  { name: 'debug_rounds', type: scalar('int32', false), description: 'debug rounds the script needed', value: (r) => r.debug_rounds },
  { name: 'coverage_rounds', type: scalar('int32', false), description: 'coverage rounds the script needed', value: (r) => r.coverage_rounds },
  { name: 'llm_tokens', type: scalar('int64', false), description: "LLM tokens spent on the function's steps", value: (r) => r.llm_tokens },
  ...TEST_STRENGTH_COLUMNS,
  {
    name: 'solve_rate',
    type: scalar('float64', true),
    description: 'share of the implementations a model wrote from the prompt alone that pass the tests (the solvability stage of evaluation records; null when not checked)',
    value: (r) => r.solve_rate ?? null,
  },
  { name: 'generated_docstring', type: str(true), description: 'for a function without a docstring, the description written from the ground truth that its prompt shows', value: (r) => r.generated_docstring ?? null },
  {
    name: 'removed_assertions',
    type: { kind: 'struct-list', fields: ['line', 'text'] },
    description: 'assertions removed from the tests as checking behaviour the prompt does not determine (line in the script as it was, and text)',
    value: (r) => (r.solvability?.removed_assertions ?? []).map((a) => ({ line: String(a.line), text: a.text })),
  },
];

/** Parquet schema elements of the columns (by default the dataset's). */
export function parquetSchema(columns: readonly ExportColumn<never>[] = EXPORT_COLUMNS): Record<string, unknown>[] {
  return tableParquetSchema(columns);
}

/** Column-major data of some records (by default the dataset's columns). */
export function columnData<R = ProductRecord>(records: readonly R[], columns: readonly ExportColumn<R>[] = EXPORT_COLUMNS as unknown as readonly ExportColumn<R>[]): { name: string; data: unknown[] }[] {
  return tableColumnData(records, columns);
}

/** The columns (by default the dataset's) as `datasets` spells features in a dataset card's YAML. */
export function huggingFaceFeatures(columns: readonly ExportColumn<never>[] = EXPORT_COLUMNS): Record<string, unknown>[] {
  return tableFeatures(columns);
}
