/**
 * Reading evaluation datasets: our `dataset.jsonl` and RepoST's published format (the same
 * fields without ours). Both become one `EvalRecord`, the shape the rest of the evaluation uses.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

export type DatasetFormat = 'ours' | 'repost';

/** The fields the evaluation reads; anything else on a line is kept out of the way. */
export const EvalDatasetLineSchema = z
  .object({
    func_name: z.string().min(1),
    idx: z.union([z.string(), z.number()]).transform(String),
    repo_name: z.string().min(1),
    func_path: z.string().min(1),
    orig_func: z.string().min(1),
    orig_context: z.string(),
    eval_script: z.string().min(1),
    commit_id: z.string().nullable().optional(),
    // Our additions (absent in RepoST's files).
    qualname: z.string().min(1).optional(),
    function_id: z.string().min(1).optional(),
    /** The split the crawl recorded (`train` or `eval`); RepoST's files carry none. */
    split: z.enum(['train', 'eval']).optional(),
    packages: z.array(z.object({ name: z.string().min(1), version: z.string().min(1) })).optional(),
    /** The surviving mutants' diffs, when the crawl scored the record's tests. */
    mutation_survivors: z.string().nullable().optional(),
    /** The description written for a function without a docstring, which its prompt shows (solvability stage). */
    generated_docstring: z.string().min(1).nullable().optional(),
  })
  .passthrough();

export interface EvalRecord {
  /** Deterministic id: ours as recorded, else derived from repository, commit, path and name. */
  functionId: string;
  idx: string;
  /** `name` or `Class.method`: where the new implementation goes in the script. */
  qualname: string;
  name: string;
  repo: string;
  path: string;
  commit: string | null;
  /** The ground truth. */
  origFunc: string;
  /** The dependency-only context (`## path` blocks), without a surrounding code fence. */
  context: string;
  evalScript: string;
  /** Packages the script is known to need (`name==version`), installed before the first run. */
  requirements: string[];
  format: DatasetFormat;
  /** The split the record declares, or null (RepoST's format declares none). */
  split: 'train' | 'eval' | null;
  /** The surviving mutants' diffs the record lists (sandbox/mutation.ts), or null. */
  mutationSurvivors?: string | null;
  /** A description written for a target without a docstring, shown in its prompt in place of one (null: none). */
  generatedDocstring: string | null;
  /** The repository's top-level module names, when known exactly (a record built by the crawl itself). */
  localModules?: string[];
}

/** What an item's record artifact holds: the normalised record and the dataset line as read. */
export interface StoredEvalRecord {
  record: EvalRecord;
  raw: Record<string, unknown>;
}

/** What a run records about the dataset it read. */
export interface DatasetMeta {
  file: string;
  format: DatasetFormat | 'mixed';
  functions: number;
  /** Records per declared split (`none`: the record declares no split). */
  splits: { train: number; eval: number; none: number };
}

export function derivedFunctionId(repo: string, commit: string | null, path: string, qualname: string): string {
  return createHash('sha256').update(`${repo}\0${commit ?? ''}\0${path}\0${qualname}`).digest('hex').slice(0, 16);
}

/** RepoST wraps its contexts in a ```python fence; ours are bare. */
export function unfence(text: string): string {
  const m = /^\s*```[\w+-]*\n([\s\S]*?)\n```\s*$/.exec(text);
  return m ? m[1]! : text.replace(/\s+$/, '');
}

export function toEvalRecord(line: z.infer<typeof EvalDatasetLineSchema>): EvalRecord {
  const ours = line.function_id !== undefined && line.qualname !== undefined;
  const qualname = line.qualname ?? line.func_name;
  const commit = line.commit_id ?? null;
  return {
    functionId: line.function_id ?? derivedFunctionId(line.repo_name, commit, line.func_path, qualname),
    idx: line.idx,
    qualname,
    name: qualname.split('.').pop()!,
    repo: line.repo_name,
    path: line.func_path,
    commit,
    origFunc: line.orig_func,
    context: unfence(line.orig_context),
    evalScript: line.eval_script,
    requirements: (line.packages ?? []).map((p) => `${p.name}==${p.version}`),
    format: ours ? 'ours' : 'repost',
    split: line.split ?? null,
    mutationSurvivors: line.mutation_survivors ?? null,
    generatedDocstring: line.generated_docstring ?? null,
  };
}

/** Parses a JSONL dataset; a bad line is an error naming the line, never silently skipped. */
export function parseEvalDataset(text: string): EvalRecord[] {
  const rows: { where: string; json: unknown }[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    try {
      rows.push({ where: `line ${i + 1}`, json: JSON.parse(line) });
    } catch (err) {
      throw new Error(`dataset line ${i + 1}: not JSON (${(err as Error).message})`);
    }
  });
  return parseEvalRows(rows);
}

/**
 * Evaluation records from dataset rows already read (JSON lines, or the rows of an exported
 * Parquet file), each named by `where` in errors; a bad or repeated row is an error, never skipped.
 */
export function parseEvalRows(rows: readonly { where: string; json: unknown }[]): EvalRecord[] {
  const records: EvalRecord[] = [];
  const seen = new Map<string, string>();
  for (const { where, json } of rows) {
    const parsed = EvalDatasetLineSchema.safeParse(json);
    if (!parsed.success) {
      throw new Error(`dataset ${where}: not an evaluation record: ${parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`);
    }
    const record = toEvalRecord(parsed.data);
    const earlier = seen.get(record.functionId);
    if (earlier !== undefined) throw new Error(`dataset ${where}: function ${record.functionId} (${record.repo} ${record.path}::${record.qualname}) repeats ${earlier}`);
    seen.set(record.functionId, where);
    records.push(record);
  }
  return records;
}
