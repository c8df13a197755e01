/**
 * The columns of the exported class environments (`classes-dataset.jsonl`, the export's
 * `classes` configuration): the function record's fields at class level, the test functions and
 * coverage per method, then the class corpus's skeleton, documentation level and metrics (one
 * column per metric, as `classes.parquet` has them). The split is not a column: each split is its
 * own file.
 */
import { CLASS_METRICS } from '../classes/metrics';
import type { ClassDatasetRecord } from '../store/records';
import { CONTEXT_UNSUPPLIED_COLUMN, TEST_STRENGTH_COLUMNS, type ColumnType, type ExportColumn } from './columns';

const str = (nullable = false): ColumnType => ({ kind: 'scalar', scalar: 'string', nullable });
const col = (name: string, type: ColumnType, description: string, value: (r: ClassDatasetRecord) => unknown): ExportColumn<ClassDatasetRecord> => ({ name, type, description, value });

export const CLASS_ENVIRONMENT_COLUMNS: readonly ExportColumn<ClassDatasetRecord>[] = [
  col('class_name', str(), 'name of the target class (a top-level class)', (r) => r.class_name),
  col('idx', str(), "the example's id (equals class_id)", (r) => r.idx),
  col('repo_name', str(), 'source repository (owner/name on GitHub)', (r) => r.repo_name),
  col('class_path', str(), "path of the class's file in the repository", (r) => r.class_path),
  col('orig_class', str(), 'the class as written in the repository (the ground truth)', (r) => r.orig_class),
  col('orig_context', str(), 'what any of its methods uses, then its own file with the whole class, as `## path` blocks', (r) => r.orig_context),
  col('eval_script', str(), 'the standalone evaluation script: the sandboxed class, its dependencies and test functions comparing it with `<Class>_new_implementation`', (r) => r.eval_script),
  col('test_functions', { kind: 'struct-list', fields: ['name'] }, "the script's test functions (what a per-test pass rate counts)", (r) => r.test_functions.map((name) => ({ name }))),
  col('coverage_rate', { kind: 'scalar', scalar: 'float64', nullable: true }, "coverage (0..1) over all the class's methods: branch arcs when they branch, else lines", (r) => r.coverage_rate),
  col('coverage_report', str(), 'the coverage measurement in words, per method included', (r) => r.coverage_report),
  col(
    'method_coverage',
    { kind: 'struct-list', fields: ['method', 'rate', 'line_rate', 'has_branches'], types: { rate: 'float64', line_rate: 'float64', has_branches: 'bool' } },
    'per method: its coverage (the branch rate when it has branches, else the line rate), its line rate, whether it has branches',
    (r) => r.method_coverage.map((m) => ({ method: m.method, rate: m.rate, line_rate: m.line_rate, has_branches: m.has_branches })),
  ),
  col('sandbox_ast_check', { kind: 'scalar', scalar: 'bool', nullable: true }, 'whether the sandboxed class has the same AST as the original', (r) => r.sandbox_ast_check),
  col('sandbox_functionality_check', str(true), "the LLM's functionality verdict when the ASTs differ", (r) => r.sandbox_functionality_check),
  col('test_correctness_check', str(true), "the LLM's verdict on the tests ('yes' admits them)", (r) => r.test_correctness_check),
  col('commit_id', str(), 'the commit the repository was pinned to', (r) => r.commit_id),
  col('commit_date', str(true), "when that commit was made; the script's packages are the releases of then", (r) => r.commit_date ?? null),
  col('class_id', str(), 'deterministic id from repository, commit, path and class name', (r) => r.class_id),
  col('license', str(true), "the repository's license key when known", (r) => r.license),
  col('license_source', str(true), "where the license came from: 'github-api', 'file:<name>' (the repository's license file) or 'none'", (r) => r.license_source ?? null),
  col('coverage_threshold', { kind: 'scalar', scalar: 'float64', nullable: false }, 'the coverage the split required', (r) => r.coverage_threshold),
  col('ast_check_required', { kind: 'scalar', scalar: 'bool', nullable: false }, 'whether the split required equal ASTs', (r) => r.ast_check_required),
  CONTEXT_UNSUPPLIED_COLUMN,
  col('method_names', { kind: 'struct-list', fields: ['name'] }, 'its methods (those of nested classes as Inner.method; `methods` is their number)', (r) => r.methods.map((name) => ({ name }))),
  col('class_skeleton', str(), 'class and method signatures with their docstrings, bodies replaced by pass', (r) => r.class_skeleton),
  col('documentation_level', str(), 'full (every program unit documented), partial or none', (r) => r.documentation_level),
  ...CLASS_METRICS.map((c) => col(c.name, { kind: 'scalar', scalar: c.integer ? 'int32' : 'float64', nullable: true }, `${c.group}: ${c.description}`, (r) => r.metrics[c.name] ?? null)),
  col('debug_rounds', { kind: 'scalar', scalar: 'int32', nullable: false }, 'debug rounds it took', (r) => r.debug_rounds),
  col('coverage_rounds', { kind: 'scalar', scalar: 'int32', nullable: false }, 'coverage rounds it took', (r) => r.coverage_rounds),
  col('llm_tokens', { kind: 'scalar', scalar: 'int64', nullable: false }, 'LLM tokens spent on it', (r) => r.llm_tokens),
  ...TEST_STRENGTH_COLUMNS,
];
