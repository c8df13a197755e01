/**
 * The one storage seam of the factory (docs/architecture.md, invariant 11). Everything a run writes or reads
 * outside Temporal goes through a `Store`: content-addressed artifacts, repository snapshots,
 * LLM exchanges and the answer cache, the runs with their frozen settings, and the records.
 *
 * Two implementations sit behind it: the local data directory (the embedded default) and
 * PostgreSQL (`REPOST_STORE_URL=postgres://...`) for workers on several machines. Code elsewhere
 * never asks which one is in use; `openStore(config)` is the only place that chooses.
 */
import { z } from 'zod';
import type { ArtifactKey, Artifacts } from './artifacts';
import type { FunctionStage, RepoOutcome, TargetKind } from '../contracts';
import type { ExchangeIndexEntry } from './exchanges';
import { StoredRecordSchema, type RoundsRan, type StoredRecord } from './records';
import type { RefusalTotals } from './refusals';
import type { Usage } from './usage';

export type { StoredRecord };

/** What a run is: its id, frozen settings and sources (artifact keys), and how far it got. */
export const RunManifestSchema = z.object({
  runId: z.string().min(1),
  kind: z.enum(['crawl', 'eval']).default('crawl'),
  /**
   * An evaluation run: what it evaluates, functions (`eval.ts`) or whole classes (`eval.ts
   * --classes`); their items, results and summary have different shapes. Absent in a crawl and
   * in an evaluation stored before it was kept (those evaluated functions: see `evaluatedKind`).
   */
  targetKind: z.enum(['function', 'class']).optional(),
  createdAt: z.string(),
  /** The store the run was started against; a worker on another store refuses the run's work. */
  storeId: z.string(),
  /** Artifact key of the run's frozen settings (`RunSettings`). */
  settingsKey: z.string(),
  /** Artifact key of the run's source list. */
  sourcesKey: z.string().nullable(),
  sources: z.number().int().nonnegative(),
  /** Where the launcher writes the run's files (on the launcher's machine). */
  outDir: z.string().nullable(),
  status: z.enum(['running', 'finished']),
  /** Set when the run finalized: the summary as `summary.json` holds it. */
  summary: z.unknown().optional(),
  finishedAt: z.string().optional(),
  /** How often the run was resumed on purpose (`start.ts --resume`). */
  resumed: z.number().int().nonnegative().default(0),
});
export type RunManifest = z.infer<typeof RunManifestSchema>;
/** What an evaluation run evaluates (an evaluation stored before `targetKind` was kept evaluated functions). */
export function evaluatedKind(run: Pick<RunManifest, 'targetKind'>): TargetKind {
  return run.targetKind ?? 'function';
}

const EVALUATED_NOUN: Readonly<Record<TargetKind, string>> = { function: 'functions', class: 'classes' };

/**
 * Refuses, with an error saying what the run is, a run that is not an evaluation of `kind`s: a
 * reader of one evaluation's shapes never misreads a crawl or the other kind's evaluation.
 * `elsewhere` says where such a run is read instead.
 */
export function requireEvalRun(run: RunManifest, kind: TargetKind, elsewhere: (evaluated: TargetKind) => string): void {
  if (run.kind !== 'eval') throw new RunKindError(`run ${run.runId} is a ${run.kind} run, not an evaluation run`);
  const evaluated = evaluatedKind(run);
  if (evaluated !== kind) throw new RunKindError(`run ${run.runId} is an evaluation of ${EVALUATED_NOUN[evaluated]}, not of ${EVALUATED_NOUN[kind]}: ${elsewhere(evaluated)}`);
}

/**
 * Refuses an evaluation run, saying what it is, where a crawl's records, summary and files are
 * read (`reader` names what reads them): an evaluation's items and results are not records.
 */
export function requireCrawlRun(run: RunManifest, reader: string): void {
  if (run.kind !== 'crawl') {
    throw new RunKindError(`run ${run.runId} is an ${runKindLabel(run)}, not a crawl: ${reader} reads only crawl runs; an evaluation's files are written by eval.ts${run.outDir ? ` (this one's to ${run.outDir})` : ''}`);
  }
}

/** A run read by a command that does not read runs of its kind (the message says what it is and what reads it). */
export class RunKindError extends Error {
  override name = 'RunKindError';
}

/** A run's kind as a person reads it: `crawl`, `evaluation of functions`, `evaluation of classes`. */
export function runKindLabel(run: Pick<RunManifest, 'kind' | 'targetKind'>): string {
  return run.kind === 'eval' ? `evaluation of ${EVALUATED_NOUN[evaluatedKind(run)]}` : run.kind;
}

export type NewRun = Omit<RunManifest, 'status' | 'summary' | 'finishedAt' | 'resumed' | 'storeId' | 'kind'> & { kind?: RunManifest['kind'] };

/** One repository of a run: written when its candidates are listed, and again when it ends. */
export const RepoProgressSchema = z.object({
  index: z.number().int().nonnegative(),
  outcome: z.object({
    repoId: z.string().nullable(),
    source: z.unknown(),
    skipped: z.string().nullable(),
    candidates: z.number(),
    accepted: z.number(),
    rejected: z.number(),
  }),
  /** Artifact keys of the candidate pages (FunctionRef lists, class targets' pages after the functions'); the run's records are these targets'. */
  candidatePages: z.array(z.string()).default([]),
  /** When the run makes class environments: the repository's classes found, dropped per class filter, kept and sampled. */
  classSelection: z
    .object({ found: z.number().int(), droppedBy: z.record(z.string(), z.number().int()), kept: z.number().int(), sampled: z.number().int() })
    .optional(),
  done: z.boolean(),
});
export type RepoProgress = z.infer<typeof RepoProgressSchema> & { outcome: RepoOutcome };

export { StoredRecordSchema };

export interface RecordPage {
  records: StoredRecord[];
  /** Pass back to get the next page; null when there is none. */
  next: string | null;
}

/** One function's result in an evaluation run (the eval code owns its shape and validates it). */
export interface EvalResultEntry {
  functionId: string;
  result: unknown;
}

export interface EvalResultPage {
  results: EvalResultEntry[];
  /** Pass back to get the next page; null when there is none. */
  next: string | null;
}

/** Per-stage counts of a run's records, for progress views. */
export interface RecordCounts {
  total: number;
  accepted: number;
  byStage: Partial<Record<FunctionStage, number>>;
  /** Debug and coverage rounds that ran, over the records so far. */
  rounds: RoundsRan;
  /** Of the records, those of class environments (a record of kind 'class'): all, accepted, by stage and their rounds. */
  classes: { total: number; accepted: number; byStage: Partial<Record<FunctionStage, number>>; rounds: RoundsRan };
}

export interface Store extends Artifacts {
  /** 'local' or 'postgres', and a stable id of this store (workers compare it with the run's). */
  readonly kind: 'local' | 'postgres';
  /** Where the store lives, for messages (a folder, or the database URL without its password). */
  readonly location: string;
  storeId(): Promise<string>;

  // Snapshots: immutable repository trees keyed by repository and commit.
  /** Keeps the tree at `dir` as the snapshot of repoId@commit (no-op if the store already has it). */
  saveSnapshot(repoId: string, commit: string, dir: string): Promise<void>;
  /** A local directory holding the snapshot's tree, fetched from the store when needed; null if unknown. */
  openSnapshot(repoId: string, commit: string): Promise<string | null>;

  // LLM exchanges: the per-function and per-run index, and the answer cache.
  appendExchange(entry: ExchangeIndexEntry): Promise<void>;
  listExchanges(functionId: string): Promise<ExchangeIndexEntry[]>;
  listRunExchanges(runId: string): AsyncIterable<ExchangeIndexEntry>;
  /** The run's LLM calls, tokens and cost so far, aggregated by the store (cheap enough to ask every few seconds). */
  runUsage(runId: string): Promise<Usage>;
  /** The run's refused answers so far (their usage in all, by check and by step, and the answers reviewed), aggregated by the store like `runUsage`. */
  runRefusals(runId: string): Promise<RefusalTotals>;
  cacheGet(cacheKey: string): Promise<ArtifactKey | null>;
  cachePut(cacheKey: string, exchangeKey: ArtifactKey): Promise<void>;

  // Runs.
  /** Registers a new run; throws `RunExistsError` if the id is taken. */
  createRun(run: NewRun): Promise<RunManifest>;
  getRun(runId: string): Promise<RunManifest | null>;
  updateRun(runId: string, patch: Partial<Pick<RunManifest, 'status' | 'summary' | 'finishedAt' | 'outDir' | 'resumed'>>): Promise<RunManifest>;

  // Records: one per function of a run, written with an upsert (never duplicated).
  putRecord(runId: string, record: StoredRecord): Promise<void>;
  getRecord(runId: string, functionId: string): Promise<StoredRecord | null>;
  /** Records ordered by function id, a page at a time. */
  listRecords(runId: string, options?: { after?: string | null; limit?: number }): Promise<RecordPage>;
  /** Which of these function ids already have a record in the run. */
  recordedIds(runId: string, functionIds: string[]): Promise<Set<string>>;
  countRecords(runId: string): Promise<RecordCounts>;

  // Evaluation results: one JSON document per function of an evaluation run (kind 'eval'), written
  // with an upsert like records (a re-run or replay of a function replaces its own result).
  putEvalResult(runId: string, functionId: string, result: unknown): Promise<void>;
  /** Results ordered by function id, a page at a time. */
  listEvalResults(runId: string, options?: { after?: string | null; limit?: number }): Promise<EvalResultPage>;

  // Repositories of a run.
  putRepoProgress(runId: string, progress: RepoProgress): Promise<void>;
  listRepoProgress(runId: string): Promise<RepoProgress[]>;

  close(): Promise<void>;
}

export class RunExistsError extends Error {
  override name = 'RunExistsError';
}

/** Longest run id: it names a folder, a key and the first part of every workflow id of the run. */
export const RUN_ID_MAX_LENGTH = 128;
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const RUN_ID_RULE = `1 to ${RUN_ID_MAX_LENGTH} letters, digits, '.', '_' or '-', starting with a letter or a digit, without '..'`;

/** What is wrong with a run id (null when nothing is): no separators, control characters, `..`, or more than 128 characters. */
export function runIdProblem(runId: string): string | null {
  if (runId.length === 0 || runId.length > RUN_ID_MAX_LENGTH || !RUN_ID.test(runId) || runId.includes('..')) {
    const shown = runId.length > 60 ? `${JSON.stringify(runId.slice(0, 60))}... (${runId.length} characters)` : JSON.stringify(runId);
    return `not a run id: ${shown} (${RUN_ID_RULE})`;
  }
  return null;
}

export function isRunId(runId: string): boolean {
  return runIdProblem(runId) === null;
}

/** A run id that breaks the rule, refused where it enters (a flag, a store call). */
export class InvalidRunIdError extends Error {
  override name = 'InvalidRunIdError';
}

/** The run id itself, or an `InvalidRunIdError` saying what is wrong with it. */
export function checkRunId(runId: string): string {
  const problem = runIdProblem(runId);
  if (problem) throw new InvalidRunIdError(problem);
  return runId;
}

/** A run id as a flag or field (zod). */
export const RunIdSchema = z.string().superRefine((value, ctx) => {
  const problem = runIdProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** The store does not answer (a database that is down, a wrong URL, a data directory that cannot be written). */
export class StoreUnreachableError extends Error {
  override name = 'StoreUnreachableError';
}

/** Iterates every evaluation result of a run, page by page (bounded memory whatever the run's size). */
export async function* allEvalResults(store: Store, runId: string, pageSize = 200): AsyncIterable<EvalResultEntry> {
  let after: string | null = null;
  for (;;) {
    const page: EvalResultPage = await store.listEvalResults(runId, { after, limit: pageSize });
    yield* page.results;
    if (!page.next) return;
    after = page.next;
  }
}

/** Iterates every record of a run, page by page (bounded memory whatever the run's size). */
export async function* allRecords(store: Store, runId: string, pageSize = 500): AsyncIterable<StoredRecord> {
  let after: string | null = null;
  for (;;) {
    const page: RecordPage = await store.listRecords(runId, { after, limit: pageSize });
    yield* page.records;
    if (!page.next) return;
    after = page.next;
  }
}
