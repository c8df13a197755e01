/**
 * RepoST-format evaluation records, run the way RepoST's own harness checks them: the record's
 * original function copied into its evaluation script as `<name>_new_implementation`, executed
 * with branch coverage of the target, and compared with the coverage the record reports.
 */
import { z } from 'zod';
import type { SandboxExecutor } from './executor';
import type { RunHooks, RunRequest } from './run-request';
import { isolatedPlacement, newImplementationName, withNewImplementation } from './new-implementation';
import { signatureMismatch } from './record-signature';
import type { SandboxResult } from './schema';

export const RepostRecordSchema = z
  .object({
    func_name: z.string().min(1),
    idx: z.union([z.string(), z.number()]).transform(String),
    repo_name: z.string().optional(),
    func_path: z.string().optional(),
    orig_func: z.string().min(1),
    eval_script: z.string().min(1),
    coverage_rate: z.number().min(0).max(1).nullable().optional(),
    coverage_report: z.string().nullable().optional(),
    /** The commit's date, when the dataset gives it (this factory's records do): packages are resolved as of it. */
    commit_date: z.string().nullable().optional(),
  })
  .passthrough();
export type RepostRecord = z.infer<typeof RepostRecordSchema>;

export function parseRecordsJsonl(text: string): RepostRecord[] {
  return text
    .split(/\r?\n/)
    .map((line, i) => ({ line: line.trim(), n: i + 1 }))
    .filter(({ line }) => line !== '')
    .map(({ line, n }) => {
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch (err) {
        throw new Error(`record on line ${n}: not valid JSON (${(err as Error).message})`);
      }
      const parsed = RepostRecordSchema.safeParse(json);
      if (!parsed.success) throw new Error(`record on line ${n}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
      return parsed.data;
    });
}

/**
 * Records from a file's text: JSON Lines (our `dataset.jsonl`), or one JSON list (how RepoST
 * publishes its evaluation set, `checked_test_set_final.json`). A bad record is named by its line
 * or its position in the list.
 */
export function parseRecords(text: string): RepostRecord[] {
  if (!text.trimStart().startsWith('[')) return parseRecordsJsonl(text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`not valid JSON (${(err as Error).message})`);
  }
  if (!Array.isArray(json)) throw new Error('not a JSON list of records');
  return json.map((item, i) => {
    const parsed = RepostRecordSchema.safeParse(item);
    if (!parsed.success) throw new Error(`record ${i} of the list: ${parsed.error.issues.map((e) => `${e.path.join('.')}: ${e.message}`).join('; ')}`);
    return parsed.data;
  });
}

export interface GroundTruthOutcome {
  idx: string;
  funcName: string;
  result: SandboxResult;
  /** Our rate for the target's span, and the record's. */
  coverageRate: number | null;
  recordCoverageRate: number | null;
  /** Within 1e-9 of the record's rate (null when either side has none). */
  coverageMatches: boolean | null;
  /** Why the record itself cannot pass (its script's target has another signature than orig_func), when it did not. */
  recordIssue: string | null;
}

export type CoverageTarget = 'original' | 'new-implementation';

/** The run RepoST's harness does for a record with its ground truth. */
export interface GroundTruthOptions {
  coverageOf?: CoverageTarget;
  timeoutSec?: number;
  /** Install missing modules (default); off to check that an image already holds everything. */
  install?: boolean;
  /**
   * The code's date for records that carry none (RepoST's published records have a commit id but
   * no date): packages are resolved as of it plus `sandbox.packages.asOfGraceSec`. A record's own
   * `commit_date` wins; with neither, the newest releases.
   */
  asOf?: string;
  /**
   * Run the ground truth as an evaluation runs a candidate: in a process of its own (see
   * isolatedPlacement); no coverage is measured then (the target runs in the candidate's process).
   */
  isolated?: boolean;
}

export function groundTruthRequest(record: RepostRecord, options: GroundTruthOptions = {}): RunRequest {
  const date = record.commit_date ?? options.asOf;
  const asOf = date ? { packagesAsOf: { date } } : {};
  if (options.isolated) {
    const p = isolatedPlacement(record.eval_script, record.orig_func, record.func_name);
    return { script: p.script, candidate: { target: p.target, kind: p.kind, module: p.module }, install: options.install ?? true, timeoutSec: options.timeoutSec, ...asOf };
  }
  const script = withNewImplementation(record.eval_script, record.orig_func, record.func_name);
  const functionName = options.coverageOf === 'new-implementation' ? newImplementationName(record.func_name) : record.func_name;
  return { script, coverage: { functionName }, install: options.install ?? true, timeoutSec: options.timeoutSec, ...asOf };
}

export async function runGroundTruth(
  executor: SandboxExecutor,
  record: RepostRecord,
  options: GroundTruthOptions & { hooks?: RunHooks } = {},
): Promise<GroundTruthOutcome> {
  const result = await executor.run(groundTruthRequest(record, options), options.hooks);
  const coverageRate = result.coverage?.rate ?? null;
  const recordCoverageRate = record.coverage_rate ?? null;
  return {
    idx: record.idx,
    funcName: record.func_name,
    result,
    recordIssue: result.status === 'passed' ? null : signatureMismatch(record),
    coverageRate,
    recordCoverageRate,
    coverageMatches: coverageRate === null || recordCoverageRate === null ? null : Math.abs(coverageRate - recordCoverageRate) < 1e-9,
  };
}

/** Runs `items` through `worker` with at most `concurrency` in flight, keeping input order. */
export async function mapConcurrent<T, R>(items: T[], concurrency: number, worker: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await worker(items[i]!, i);
    }
  });
  await Promise.all(lanes);
  return out;
}
