/**
 * One class of the corpus as `classes.jsonl` holds it: where it comes from (repository, commit,
 * license, path), its source and skeleton, its documentation level and its metrics. Field names
 * follow OpenClassGen's data dictionary where it has one (`repository_name`, `file_path`,
 * `class_name`, `human_written_class`, `class_skeleton`, `total_program_units`, `total_doc_str`).
 */
import { z } from 'zod';
import { classId, classSource, type ClassInfo } from '../analysis';

export { classId, classSource };
import type { TableColumn } from '../tables/columns';
import { CLASS_METRICS, metricsRecord } from './metrics';

export const DOCUMENTATION_LEVELS = ['full', 'partial', 'none'] as const;
export type DocumentationLevel = (typeof DOCUMENTATION_LEVELS)[number];

const MetricsSchema = z.object(Object.fromEntries(CLASS_METRICS.map((c) => [c.name, c.name === 'lcom_star' ? z.number().nullable() : z.number()])));

export const ClassRecordSchema = z.object({
  id: z.string().regex(/^[0-9a-f]{16}$/),
  repository_name: z.string(),
  commit: z.string(),
  license: z.string().nullable(),
  split: z.enum(['train', 'eval']),
  file_path: z.string(),
  class_name: z.string(),
  qualname: z.string(),
  /** 0 for the class Python binds; 1, 2, ... for earlier classes of the same name in the file. */
  occurrence: z.number().int().nonnegative(),
  start_line: z.number().int().positive(),
  end_line: z.number().int().positive(),
  bases: z.array(z.string()),
  decorators: z.array(z.string()),
  human_written_class: z.string(),
  class_skeleton: z.string(),
  documentation_level: z.enum(DOCUMENTATION_LEVELS),
  metrics: MetricsSchema,
  method_metrics: z.array(z.object({ name: z.string(), line: z.number().int(), cyclomatic: z.number().int(), essential: z.number().int(), max_nesting: z.number().int() })),
});
export type ClassRecord = z.infer<typeof ClassRecordSchema>;

export interface RepositoryMeta {
  repoId: string;
  commit: string;
  license: string | null;
  split: 'train' | 'eval';
}

export function classRecord(repo: RepositoryMeta, c: ClassInfo, lines: readonly string[]): ClassRecord {
  return {
    id: classId(repo.repoId, repo.commit, c.path, c.qualname, c.occurrence),
    repository_name: repo.repoId,
    commit: repo.commit,
    license: repo.license,
    split: repo.split,
    file_path: c.path,
    class_name: c.name,
    qualname: c.qualname,
    occurrence: c.occurrence,
    start_line: c.startLine,
    end_line: c.endLine,
    bases: c.bases,
    decorators: c.decorators,
    human_written_class: classSource(lines, c.startLine, c.endLine),
    class_skeleton: c.skeleton,
    documentation_level: c.documentation,
    metrics: metricsRecord(c.metrics),
    method_metrics: c.methods.map((m) => ({ name: m.name, line: m.line, cyclomatic: m.cyclomatic, essential: m.essential, max_nesting: m.maxNesting })),
  };
}

const str = (name: keyof ClassRecord, description: string, nullable = false): TableColumn<ClassRecord> => ({
  name,
  type: { kind: 'scalar', scalar: 'string', nullable },
  description,
  value: (r) => r[name],
});
const int = (name: keyof ClassRecord, description: string): TableColumn<ClassRecord> => ({ name, type: { kind: 'scalar', scalar: 'int32', nullable: false }, description, value: (r) => r[name] });

/** The Parquet columns of the corpus: the record's fields with its metrics flattened, one column each. */
export const CLASS_COLUMNS: readonly TableColumn<ClassRecord>[] = [
  str('id', 'deterministic id from repository, commit, path and qualified name'),
  str('repository_name', 'source repository (owner/name on GitHub, a folder name for a local one)'),
  str('commit', 'the commit (or tree hash) the repository was read at'),
  str('license', "the repository's license key when known", true),
  str('split', 'train or eval, as the crawl assigns repositories'),
  str('file_path', "path of the class's file in the repository"),
  str('class_name', 'name of the class'),
  str('qualname', 'qualified name (Outer.Inner for a nested class)'),
  int('occurrence', '0 for the class Python binds, 1, 2, ... for earlier ones of the same name in the file'),
  int('start_line', 'first line (decorators included)'),
  int('end_line', 'last line of code'),
  { name: 'bases', type: { kind: 'struct-list', fields: ['base'] }, description: 'base class expressions as written', value: (r) => r.bases.map((base) => ({ base })) },
  str('human_written_class', 'the class as written (less the indentation of its first line)'),
  str('class_skeleton', 'class and method signatures with their docstrings, bodies replaced by pass'),
  str('documentation_level', 'full (every program unit documented), partial or none'),
  ...CLASS_METRICS.map(
    (c): TableColumn<ClassRecord> => ({
      name: c.name,
      type: { kind: 'scalar', scalar: c.integer ? 'int32' : 'float64', nullable: c.name === 'lcom_star' },
      description: `${c.group}: ${c.description}`,
      value: (r) => r.metrics[c.name],
    }),
  ),
  {
    name: 'method_metrics',
    type: { kind: 'struct-list', fields: ['name', 'line', 'cyclomatic', 'essential', 'max_nesting'], types: { line: 'int32', cyclomatic: 'int32', essential: 'int32', max_nesting: 'int32' } },
    description: 'per method: name, line of its def, cyclomatic and essential complexity, nesting',
    value: (r) => r.method_metrics,
  },
];
