/**
 * The class corpus's metrics in one table: the record's `metrics` object, the summary's
 * distributions and the Parquet columns all come from it, so they cannot disagree. The full
 * definitions are in activities/analysis/README.md.
 */
import type { ClassMetrics } from '../analysis';

export type MetricGroup = 'size' | 'complexity' | 'coupling' | 'inheritance' | 'cohesion' | 'documentation';

export interface ClassMetricColumn {
  /** The key in a record's `metrics` and the Parquet column's name. */
  name: string;
  group: MetricGroup;
  /** Whole numbers (int32 in Parquet) or not (float64). */
  integer: boolean;
  description: string;
  value(m: ClassMetrics): number | null;
}

export const CLASS_METRICS: readonly ClassMetricColumn[] = [
  { name: 'total_lines', group: 'size', integer: true, description: 'lines of the class, decorators included', value: (m) => m.totalLines },
  { name: 'code_lines', group: 'size', integer: true, description: 'lines with code', value: (m) => m.codeLines },
  { name: 'comment_lines', group: 'size', integer: true, description: 'lines with a comment or part of a docstring', value: (m) => m.commentLines },
  { name: 'blank_lines', group: 'size', integer: true, description: 'blank lines', value: (m) => m.blankLines },
  { name: 'comment_to_code_ratio', group: 'size', integer: false, description: 'comment lines over code lines', value: (m) => m.commentToCodeRatio },
  { name: 'methods', group: 'size', integer: true, description: 'methods defined in the class body', value: (m) => m.methods },
  { name: 'class_attributes', group: 'size', integer: true, description: 'names the class body binds besides methods and classes', value: (m) => m.classAttributes },
  { name: 'instance_attributes', group: 'size', integer: true, description: 'distinct attributes assigned through self in the methods', value: (m) => m.instanceAttributes },
  { name: 'cyclomatic_total', group: 'complexity', integer: true, description: "sum over the methods of radon's cyclomatic complexity", value: (m) => m.cyclomatic.total },
  { name: 'cyclomatic_max', group: 'complexity', integer: true, description: 'largest cyclomatic complexity of a method', value: (m) => m.cyclomatic.max },
  { name: 'cyclomatic_mean', group: 'complexity', integer: false, description: 'mean cyclomatic complexity of the methods', value: (m) => m.cyclomatic.mean },
  { name: 'essential_total', group: 'complexity', integer: true, description: "sum over the methods of McCabe's essential complexity", value: (m) => m.essential.total },
  { name: 'essential_max', group: 'complexity', integer: true, description: 'largest essential complexity of a method', value: (m) => m.essential.max },
  { name: 'essential_mean', group: 'complexity', integer: false, description: 'mean essential complexity of the methods', value: (m) => m.essential.mean },
  { name: 'max_nesting', group: 'complexity', integer: true, description: 'deepest nesting of control statements in a method', value: (m) => m.maxNesting },
  { name: 'fan_in', group: 'coupling', integer: true, description: 'places elsewhere in the repository that name the class', value: (m) => m.fanIn },
  { name: 'fan_out', group: 'coupling', integer: true, description: 'distinct names the class uses and does not define (builtins aside)', value: (m) => m.fanOut.total },
  { name: 'fan_out_local', group: 'coupling', integer: true, description: 'of those, names from the repository', value: (m) => m.fanOut.local },
  { name: 'fan_out_external', group: 'coupling', integer: true, description: 'of those, names from libraries or not resolved', value: (m) => m.fanOut.external },
  { name: 'dependencies', group: 'coupling', integer: true, description: 'distinct repository definitions the class refers to', value: (m) => m.dependencies },
  { name: 'inheritance_depth', group: 'inheritance', integer: true, description: 'depth of the tree of repository base classes above it', value: (m) => m.inheritanceDepth },
  { name: 'children', group: 'inheritance', integer: true, description: 'repository classes that name it as a direct base', value: (m) => m.children },
  { name: 'cbo', group: 'inheritance', integer: true, description: 'coupling between objects: repository classes it uses or that name it', value: (m) => m.cbo },
  { name: 'lcom4', group: 'cohesion', integer: true, description: 'LCOM4: connected groups of methods (constructors left out)', value: (m) => m.lcom4 },
  { name: 'lcom_star', group: 'cohesion', integer: false, description: "Henderson-Sellers' LCOM* (0 cohesive .. 1 not; null below two methods or without attributes)", value: (m) => m.lcomStar },
  { name: 'total_program_units', group: 'documentation', integer: true, description: 'the class, its nested classes and their methods', value: (m) => m.programUnits },
  { name: 'total_doc_str', group: 'documentation', integer: true, description: 'program units with a docstring', value: (m) => m.documentedUnits },
  { name: 'docstring_coverage', group: 'documentation', integer: false, description: 'documented units over program units', value: (m) => m.docstringCoverage },
];

export function metricsRecord(m: ClassMetrics): Record<string, number | null> {
  return Object.fromEntries(CLASS_METRICS.map((c) => [c.name, c.value(m)]));
}
