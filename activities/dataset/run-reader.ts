/**
 * Reading a run: what it was (sources, frozen settings, model, prompt versions), its summary, its
 * accepted records, its rejections and the LLM exchanges of each function. The report and the
 * export read through this interface only.
 *
 * Two readers: `StoreRunReader` reads a run from the store (local data directory or PostgreSQL),
 * exchanges included; `FolderRunReader` reads the files a run exports into its folder
 * (`dataset.jsonl`, `rejections.jsonl`, `summary.json`, `run.json`), e.g. a folder copied from
 * another machine, which carries no exchanges. `openRunReader` picks one for a run id or folder.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { z } from 'zod';
import { unpricedModelsOfSettings } from '../llm/prices';
import type { ExchangeIndexEntry } from '../store/exchanges';
import { ClassDatasetRecordSchema, isClassRecord, RejectionSchema, type ClassDatasetRecord, type Rejection } from '../store/records';
import { RefusalTotalsSchema } from '../store/refusals';
import { allRecords, isRunId, requireCrawlRun, type Store } from '../store/types';
import { UsageSchema } from '../store/usage';
import { ProductRecordSchema, type ProductRecord } from './product-record';
import type { ClassRunSummary } from './class-summary';
import { runPaths } from './records';
import { candidateIds, summarizeRun } from './run-files';

/** A run's summary (`summary.json`), as far as its readers rely on it. */
export const RunSummaryFileSchema = z.looseObject({
  runId: z.string(),
  repositories: z.number(),
  functions: z.number(),
  accepted: z.number(),
  rejected: z.number(),
  funnel: z.record(z.string(), z.number()),
  rejectedAt: z.record(z.string(), z.number()).default({}),
  /** Rounds that ran (absent in summaries written before they were counted). */
  rounds: z
    .object({
      debug: z.object({ functions: z.number(), rounds: z.number() }),
      coverage: z.object({ functions: z.number(), rounds: z.number() }),
    })
    .optional(),
  skippedRepos: z.array(z.object({ source: z.unknown(), reason: z.string() })).default([]),
  llm: z
    .object({
      total: UsageSchema,
      /** Live calls and batch answers apart (absent in summaries written before batch mode). */
      byMode: z.object({ live: UsageSchema, batch: UsageSchema }).optional(),
      byRepo: z.record(z.string(), UsageSchema).default({}),
      byStep: z.record(z.string(), UsageSchema).default({}),
    })
    .optional(),
  /** Refused answers (absent in summaries written before they were counted). */
  regenerations: RefusalTotalsSchema.optional(),
  /** The class environments (`class-summary.ts`), when the run made any. */
  classes: z.custom<ClassRunSummary>((v) => typeof v === 'object' && v !== null && 'selection' in v && 'funnel' in v).optional(),
});
export type RunSummaryView = z.infer<typeof RunSummaryFileSchema>;

/** What a run was, for people: where it came from and what it ran with. */
export interface RunInfo {
  runId: string;
  createdAt: string | null;
  sources: unknown[];
  /** The pipeline settings frozen at the start (loops, thresholds, windows). */
  settings: Record<string, unknown>;
  /** The default model of the run's frozen configuration. */
  model: string | null;
  /** Prompt template versions by kind, as the run started with them. */
  promptVersions: Record<string, string>;
  /** The run's models without a price in its `llm.prices` (their cost is unknown, never $0); absent: none known. */
  unpricedModels?: string[];
}

/** The frozen settings artifact (`run-settings.ts` plus the pipeline settings), read leniently. */
const FrozenSettingsSchema = z.looseObject({
  config: z.looseObject({ llm: z.looseObject({ model: z.string().optional() }).optional() }).optional(),
  promptVersions: z.record(z.string(), z.string()).default({}),
  pipeline: z.record(z.string(), z.unknown()).default({}),
});

function runInfoOf(runId: string, createdAt: string | null, frozen: unknown, sources: unknown): RunInfo {
  const settings = FrozenSettingsSchema.safeParse(frozen ?? {});
  const s = settings.success ? settings.data : { promptVersions: {}, pipeline: {}, config: undefined };
  // Timeouts are how long activities may take on this deployment, not how the dataset was made.
  const { timeouts: _timeouts, ...pipeline } = s.pipeline;
  void _timeouts;
  const unpricedModels = unpricedModelsOfSettings((s.config ?? {}) as Record<string, unknown>);
  return { runId, createdAt, sources: Array.isArray(sources) ? sources : [], settings: pipeline, model: s.config?.llm?.model ?? null, promptVersions: s.promptVersions, unpricedModels };
}

/** One recorded LLM exchange as people read it (`activities/llm/exchange.ts` writes the full record). */
export const ExchangeViewSchema = z.looseObject({
  step: z.string(),
  functionId: z.string(),
  promptId: z.string().optional(),
  promptVersion: z.string().optional(),
  attempt: z.number().default(0),
  request: z.looseObject({ model: z.string(), messages: z.array(z.object({ role: z.string(), content: z.string() })), temperature: z.number().optional() }),
  response: z.looseObject({ text: z.string(), finishReason: z.string().nullable().optional(), model: z.string().optional() }).nullable(),
  error: z.looseObject({ kind: z.string(), message: z.string() }).optional(),
  usage: z.looseObject({ promptTokens: z.number(), completionTokens: z.number(), estimated: z.boolean().optional() }),
  costUsd: z.number(),
  latencyMs: z.number(),
  cached: z.boolean(),
  refusedBy: z.array(z.string()).optional(),
  recordedAt: z.string(),
});
export type ExchangeView = z.infer<typeof ExchangeViewSchema>;

export interface RunReader {
  readonly runId: string;
  /** Where the run is read from, for messages. */
  readonly location: string;
  /** The run's own folder, when it has one (where its files were exported). */
  readonly outDir: string | null;
  info(): Promise<RunInfo>;
  summary(): Promise<RunSummaryView>;
  records(): AsyncIterable<ProductRecord>;
  rejections(): AsyncIterable<Rejection>;
  /** The run's accepted class environments (none for a run that made none). */
  classRecords(): AsyncIterable<ClassDatasetRecord>;
  classRejections(): AsyncIterable<Rejection>;
  /** The function's exchanges recorded for this run, oldest first. */
  exchanges(functionId: string): Promise<ExchangeIndexEntry[]>;
  exchange(exchangeKey: string): Promise<ExchangeView>;
}

export class RunNotFoundError extends Error {
  override name = 'RunNotFoundError';
}

/** A run file or stored item that does not hold what it should, named by where it is. */
export class RunFileError extends Error {
  override name = 'RunFileError';
}

function issues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
}

function parseOr<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new RunFileError(`${where}: ${issues(parsed.error)}`);
  return parsed.data;
}

/** A run in the store. Its records are those of its candidates, as the run's files are. */
export class StoreRunReader implements RunReader {
  readonly location: string;
  private candidates: Promise<Set<string>> | null = null;

  private constructor(
    private readonly store: Store,
    readonly runId: string,
    readonly outDir: string | null,
  ) {
    this.location = `run ${runId} in the store at ${store.location}`;
  }

  static async open(store: Store, runId: string): Promise<StoreRunReader> {
    const run = await store.getRun(runId);
    if (!run) throw new RunNotFoundError(`no run ${runId} in the store at ${store.location}`);
    requireCrawlRun(run, "the run reader (report.ts, export.ts, a run's dataset files)");
    return new StoreRunReader(store, runId, run.outDir);
  }

  async info(): Promise<RunInfo> {
    const run = (await this.store.getRun(this.runId))!;
    const [frozen, sources] = await Promise.all([this.store.getJson(run.settingsKey), run.sourcesKey ? this.store.getJson(run.sourcesKey) : []]);
    return runInfoOf(this.runId, run.createdAt, frozen, sources);
  }

  async summary(): Promise<RunSummaryView> {
    const run = (await this.store.getRun(this.runId))!;
    // A finished run keeps its summary; one still crawling is summarised as it stands.
    return parseOr(RunSummaryFileSchema, run.summary ?? (await summarizeRun(this.store, this.runId)), `summary of ${this.location}`);
  }

  private async *stored() {
    this.candidates ??= candidateIds(this.store, this.runId);
    const ids = await this.candidates;
    for await (const r of allRecords(this.store, this.runId)) if (ids.has(r.fn.functionId)) yield r;
  }

  async *records(): AsyncIterable<ProductRecord> {
    for await (const r of this.stored()) if (!isClassRecord(r) && r.accepted) yield r.record;
  }

  async *rejections(): AsyncIterable<Rejection> {
    for await (const r of this.stored()) if (!isClassRecord(r) && !r.accepted) yield r.rejection;
  }

  async *classRecords(): AsyncIterable<ClassDatasetRecord> {
    for await (const r of this.stored()) if (isClassRecord(r) && r.accepted) yield r.record;
  }

  async *classRejections(): AsyncIterable<Rejection> {
    for await (const r of this.stored()) if (isClassRecord(r) && !r.accepted) yield r.rejection;
  }

  async exchanges(functionId: string): Promise<ExchangeIndexEntry[]> {
    return (await this.store.listExchanges(functionId)).filter((e) => e.runId === this.runId);
  }

  async exchange(exchangeKey: string): Promise<ExchangeView> {
    return parseOr(ExchangeViewSchema, await this.store.getJson(exchangeKey), `exchange ${exchangeKey}`);
  }
}

async function* jsonLines<T>(file: string, schema: z.ZodType<T>): AsyncGenerator<T> {
  if (!fs.existsSync(file)) return;
  const lines = readline.createInterface({ input: fs.createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (!line.trim()) continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (err) {
      throw new RunFileError(`${file}:${n}: not JSON (${(err as Error).message})`);
    }
    yield parseOr(schema, json, `${file}:${n}`);
  }
}

function readJsonFile(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new RunFileError(`${file}: cannot read it (${(err as Error).message})`);
  }
}

/** `run.json` as a run folder holds it: the run's manifest with its frozen settings and sources. */
const ExportedRunSchema = z.looseObject({
  runId: z.string(),
  createdAt: z.string().optional(),
  settings: z.unknown().optional(),
  sourceList: z.array(z.unknown()).optional(),
});

/** The files a run exported into its folder. It carries no LLM exchanges. */
export class FolderRunReader implements RunReader {
  readonly location: string;

  private constructor(
    readonly runId: string,
    readonly outDir: string,
  ) {
    this.location = outDir;
  }

  /** A folder holding a run's summary.json, else null. */
  static open(dir: string): FolderRunReader | null {
    const runDir = path.resolve(dir);
    const file = runPaths(runDir).summary;
    if (!fs.existsSync(file)) return null;
    return new FolderRunReader(parseOr(RunSummaryFileSchema, readJsonFile(file), file).runId, runDir);
  }

  async info(): Promise<RunInfo> {
    const file = runPaths(this.outDir).run;
    if (!fs.existsSync(file)) return runInfoOf(this.runId, null, null, []);
    const run = parseOr(ExportedRunSchema, readJsonFile(file), file);
    return runInfoOf(this.runId, run.createdAt ?? null, run.settings, run.sourceList ?? []);
  }

  async summary(): Promise<RunSummaryView> {
    const file = runPaths(this.outDir).summary;
    return parseOr(RunSummaryFileSchema, readJsonFile(file), file);
  }

  records(): AsyncIterable<ProductRecord> {
    return jsonLines(runPaths(this.outDir).dataset, ProductRecordSchema);
  }

  rejections(): AsyncIterable<Rejection> {
    return jsonLines(runPaths(this.outDir).rejections, RejectionSchema.extend({ split: RejectionSchema.shape.split.default('train') }));
  }

  classRecords(): AsyncIterable<ClassDatasetRecord> {
    return jsonLines(runPaths(this.outDir).classes, ClassDatasetRecordSchema);
  }

  classRejections(): AsyncIterable<Rejection> {
    return jsonLines(runPaths(this.outDir).classRejections, RejectionSchema);
  }

  async exchanges(): Promise<ExchangeIndexEntry[]> {
    return [];
  }

  async exchange(exchangeKey: string): Promise<ExchangeView> {
    throw new RunFileError(`exchange ${exchangeKey}: a run folder carries no exchanges; read the run from its store`);
  }
}

/** Where a run named by id or folder is: its id, and the folder when it was named by one; `inStore` when the store holds that run (and the folder is its own). Null when it names neither. */
export async function locateRun(store: Store, runIdOrDir: string): Promise<{ runId: string; inStore: boolean; folder: FolderRunReader | null } | null> {
  if (isRunId(runIdOrDir) && (await store.getRun(runIdOrDir))) return { runId: runIdOrDir, inStore: true, folder: null };
  const folder = FolderRunReader.open(runIdOrDir);
  if (!folder) return null;
  const stored = isRunId(folder.runId) ? await store.getRun(folder.runId) : null;
  return { runId: folder.runId, inStore: Boolean(stored?.outDir && path.resolve(stored.outDir) === folder.outDir), folder };
}

/**
 * The reader for `runIdOrDir`: the store's run of that id; else a run folder, read from the store
 * when the store holds the folder's run (for its exchanges), else from the folder's files.
 */
export async function openRunReader(store: Store, runIdOrDir: string): Promise<RunReader> {
  const run = await locateRun(store, runIdOrDir);
  if (!run) throw new RunNotFoundError(`no run ${runIdOrDir}: neither a run id in the store at ${store.location} nor a run folder (one holding summary.json)`);
  // A folder's run.json names its run; a name that is no run id is no run of this store.
  return run.inStore ? StoreRunReader.open(store, run.runId) : run.folder!;
}
