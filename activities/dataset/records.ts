/**
 * Dataset records. Each function's end (accepted or rejected) is written once to
 * `<outDir>/records/<functionId>.json`, atomically, so re-running or replaying a function
 * overwrites its own file and never duplicates or loses one (DESIGN invariant 3). The run's
 * files are assembled from those: `dataset.jsonl` (RepoST's format plus our fields),
 * `rejections.jsonl` and `summary.json` with the funnel.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic, type ArtifactStore } from '../artifacts/store';
import type { FunctionStage, RecordInput, RepoOutcome, RunSummary } from '../contracts';

/** Stages in pipeline order; a function rejected at a stage passed every stage before it. */
export const STAGE_ORDER: readonly FunctionStage[] = [
  'prepare',
  'sandbox',
  'tests',
  'execute',
  'debug',
  'coverage',
  'ast_check',
  'functionality_check',
  'test_check',
  'accepted',
];

/** One line of `dataset.jsonl`: RepoST's published fields first, then what this factory adds. */
export const DatasetRecordSchema = z.object({
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
  standalone: z.boolean().nullable(),
  packages: z.array(z.object({ name: z.string(), version: z.string() })),
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
  stage: z.string(),
  reason: z.string(),
  debug_rounds: z.number().int(),
  coverage_rounds: z.number().int(),
  llm_tokens: z.number(),
});
export type Rejection = z.infer<typeof RejectionSchema>;

/** What a replay needs to run the function again. */
const FunctionRefSchema = z.object({
  functionId: z.string(),
  repoId: z.string(),
  commit: z.string(),
  snapshotDir: z.string(),
  path: z.string(),
  qualname: z.string(),
  name: z.string(),
});

export const StoredRecordSchema = z.discriminatedUnion('accepted', [
  z.object({ accepted: z.literal(true), fn: FunctionRefSchema, record: DatasetRecordSchema }),
  z.object({ accepted: z.literal(false), fn: FunctionRefSchema, rejection: RejectionSchema }),
]);
export type StoredRecord = z.infer<typeof StoredRecordSchema>;

export function runPaths(outDir: string) {
  return {
    records: path.join(outDir, 'records'),
    repos: path.join(outDir, 'repos'),
    dataset: path.join(outDir, 'dataset.jsonl'),
    rejections: path.join(outDir, 'rejections.jsonl'),
    summary: path.join(outDir, 'summary.json'),
  };
}

async function textOf(store: ArtifactStore, key: string | null | undefined): Promise<string> {
  return key ? store.get(key) : '';
}

export async function writeFunctionRecord(store: ArtifactStore, input: RecordInput): Promise<string> {
  const { run, fn, outcome, execution } = input;
  let stored: StoredRecord;
  if (outcome.accepted) {
    const result = execution ? await store.getJson<{ coverage?: { summary?: string; rate?: number } | null }>(execution.resultKey) : null;
    const record: DatasetRecord = {
      func_name: fn.name,
      idx: fn.functionId,
      repo_name: fn.repoId,
      func_path: fn.path,
      orig_func: await textOf(store, input.prepared?.sourceKey),
      orig_context: await textOf(store, input.prepared?.contextKey),
      eval_script: await textOf(store, input.scriptKey),
      coverage_rate: result?.coverage?.rate ?? null,
      coverage_report: result?.coverage?.summary ?? '',
      sandbox_ast_check: input.astEquivalent,
      sandbox_functionality_check: input.functionality,
      test_correctness_check: input.testCorrectness,
      commit_id: fn.commit,
      qualname: fn.qualname,
      function_id: fn.functionId,
      run_id: run.runId,
      standalone: input.prepared?.standalone ?? null,
      packages: execution?.packages ?? [],
      prompt_versions: input.promptVersions,
      debug_rounds: outcome.debugRounds,
      coverage_rounds: outcome.coverageRounds,
      llm_tokens: outcome.tokens,
    };
    stored = { accepted: true, fn, record: DatasetRecordSchema.parse(record) };
  } else {
    stored = {
      accepted: false,
      fn,
      rejection: {
        function_id: fn.functionId,
        repo_name: fn.repoId,
        func_path: fn.path,
        qualname: fn.qualname,
        stage: outcome.stage,
        reason: outcome.reason.slice(0, 2000),
        debug_rounds: outcome.debugRounds,
        coverage_rounds: outcome.coverageRounds,
        llm_tokens: outcome.tokens,
      },
    };
  }
  const file = path.join(runPaths(run.outDir).records, `${fn.functionId}.json`);
  await writeFileAtomic(file, JSON.stringify(stored));
  return file;
}

export async function writeRepoOutcome(outDir: string, index: string, outcome: RepoOutcome): Promise<void> {
  await writeFileAtomic(path.join(runPaths(outDir).repos, `${index.padStart(6, '0')}.json`), JSON.stringify(outcome));
}

export async function readStoredRecords(outDir: string): Promise<StoredRecord[]> {
  return readJsonFiles(runPaths(outDir).records, StoredRecordSchema);
}

async function readJsonFiles<T>(dir: string, schema: z.ZodType<T>): Promise<T[]> {
  if (!fs.existsSync(dir)) return [];
  const names = (await fsp.readdir(dir)).filter((n) => n.endsWith('.json')).sort();
  return Promise.all(names.map(async (n) => schema.parse(JSON.parse(await fsp.readFile(path.join(dir, n), 'utf8')))));
}

/** Counts of functions that reached each stage; rejections per stage plus accepted add up to the total. */
export function funnelOf(stages: readonly FunctionStage[]): { reached: Record<string, number>; rejectedAt: Record<string, number> } {
  const reached: Record<string, number> = {};
  const rejectedAt: Record<string, number> = {};
  for (const s of STAGE_ORDER) {
    reached[s] = 0;
    if (s !== 'accepted') rejectedAt[s] = 0;
  }
  for (const stage of stages) {
    const end = STAGE_ORDER.indexOf(stage);
    for (let i = 0; i <= end; i++) reached[STAGE_ORDER[i]!]!++;
    if (stage !== 'accepted') rejectedAt[stage]!++;
  }
  return { reached, rejectedAt };
}

const RepoOutcomeSchema = z.object({
  repoId: z.string().nullable(),
  source: z.unknown(),
  skipped: z.string().nullable(),
  candidates: z.number(),
  accepted: z.number(),
  rejected: z.number(),
});

/**
 * Assembles the run's files from the per-function records; safe to call again. `usage` may add
 * LLM accounting computed from the function ids (see `llmUsageOfRun`).
 */
export async function finalizeRunFiles(
  runId: string,
  outDir: string,
  usage?: (functionIds: string[]) => Promise<unknown>,
): Promise<RunSummary & { skippedRepos: { source: unknown; reason: string }[]; rejectedAt: Record<string, number>; llm?: unknown }> {
  const p = runPaths(outDir);
  const stored = await readStoredRecords(outDir);
  const accepted = stored.flatMap((s) => (s.accepted ? [s.record] : []));
  const rejected = stored.flatMap((s) => (s.accepted ? [] : [s.rejection]));
  const repos = await readJsonFiles(p.repos, RepoOutcomeSchema);
  const toLines = (rows: unknown[]) => rows.map((r) => JSON.stringify(r) + '\n').join('');
  await writeFileAtomic(p.dataset, toLines(accepted));
  await writeFileAtomic(p.rejections, toLines(rejected));
  const { reached, rejectedAt } = funnelOf([...accepted.map(() => 'accepted' as const), ...rejected.map((r) => r.stage as FunctionStage)]);
  const summary = {
    runId,
    outDir,
    datasetFile: p.dataset,
    repositories: repos.length,
    functions: stored.length,
    accepted: accepted.length,
    rejected: rejected.length,
    funnel: reached,
    rejectedAt,
    skippedRepos: repos.filter((r) => r.skipped).map((r) => ({ source: r.source, reason: r.skipped! })),
    ...(usage ? { llm: await usage(stored.map((s) => s.fn.functionId)) } : {}),
  };
  await writeFileAtomic(p.summary, JSON.stringify(summary, null, 2) + '\n');
  return summary;
}
