/**
 * Reading a finished run: its settings, summary, accepted records, rejections and the LLM
 * exchanges of each function. The report and the export read through this interface only, so
 * the run's storage (today a run folder plus the data directory's exchange index and artifact
 * store) can change behind it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { z } from 'zod';
import { ArtifactStore } from '../artifacts/store';
import { listExchanges, type ExchangeIndexEntry } from '../llm/exchange';
import { ProductRecordSchema, type ProductRecord } from './product-record';
import { RejectionSchema, runPaths, type Rejection } from './records';

const UsageTotalsSchema = z.object({
  calls: z.number(),
  cachedCalls: z.number(),
  promptTokens: z.number(),
  completionTokens: z.number(),
  costUsd: z.number(),
  latencyMs: z.number().default(0),
});

/** `summary.json`, as far as its readers rely on it. */
export const RunSummaryFileSchema = z.looseObject({
  runId: z.string(),
  repositories: z.number(),
  functions: z.number(),
  accepted: z.number(),
  rejected: z.number(),
  funnel: z.record(z.string(), z.number()),
  rejectedAt: z.record(z.string(), z.number()).default({}),
  skippedRepos: z.array(z.object({ source: z.unknown(), reason: z.string() })).default([]),
  llm: z
    .object({
      total: UsageTotalsSchema,
      byRepo: z.record(z.string(), UsageTotalsSchema).default({}),
      byStep: z.record(z.string(), UsageTotalsSchema).default({}),
    })
    .optional(),
});
export type RunSummaryFile = z.infer<typeof RunSummaryFileSchema>;

/** `run.json`: where the run came from and the settings it ran with. */
export const RunInfoSchema = z.looseObject({
  runId: z.string(),
  sources: z.array(z.unknown()).default([]),
  settings: z.record(z.string(), z.unknown()).default({}),
  llm: z.looseObject({ baseURL: z.string().optional(), model: z.string().optional() }).optional(),
});
export type RunInfo = z.infer<typeof RunInfoSchema>;

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
  recordedAt: z.string(),
});
export type ExchangeView = z.infer<typeof ExchangeViewSchema>;

export interface RunReader {
  readonly runId: string;
  /** Where the run is, for messages. */
  readonly location: string;
  info(): Promise<RunInfo>;
  summary(): Promise<RunSummaryFile>;
  records(): AsyncIterable<ProductRecord>;
  rejections(): AsyncIterable<Rejection>;
  /** The function's exchanges recorded for this run, oldest first. */
  exchanges(functionId: string): Promise<ExchangeIndexEntry[]>;
  exchange(exchangeKey: string): Promise<ExchangeView>;
}

export class RunNotFoundError extends Error {
  override name = 'RunNotFoundError';
}

/** A line of a run file that does not hold what it should: named by file and line. */
export class RunFileError extends Error {
  override name = 'RunFileError';
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
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new RunFileError(`${file}:${n}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    yield parsed.data;
  }
}

function readJsonFile<T>(file: string, schema: z.ZodType<T>, what: string): T {
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new RunFileError(`${file}: cannot read the ${what} (${(err as Error).message})`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new RunFileError(`${file}: not a ${what}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** A run folder written by the crawl, with exchanges from the data directory it ran with. */
export class LocalRunReader implements RunReader {
  readonly location: string;

  private constructor(
    readonly runId: string,
    readonly runDir: string,
    private readonly dataDir: string,
    private readonly store: ArtifactStore,
  ) {
    this.location = runDir;
  }

  /** `runDirOrId`: a run folder, or a run id under `<dataDir>/runs/`. The run must have finished (summary.json). */
  static open(runDirOrId: string, dataDir: string): LocalRunReader {
    const candidates = [path.resolve(runDirOrId), path.join(dataDir, 'runs', runDirOrId)];
    const runDir = candidates.find((dir) => fs.existsSync(path.join(dir, 'summary.json')));
    if (!runDir) {
      const started = candidates.find((dir) => fs.existsSync(path.join(dir, 'run.json')));
      throw new RunNotFoundError(
        started
          ? `${started} has no summary.json: the run has not finished (its files are assembled when the crawl ends)`
          : `no run at ${candidates.join(' or ')} (a run folder holds summary.json; the data directory is ${dataDir})`,
      );
    }
    const summary = readJsonFile(runPaths(runDir).summary, RunSummaryFileSchema, 'run summary');
    return new LocalRunReader(summary.runId, runDir, dataDir, new ArtifactStore(path.join(dataDir, 'artifacts')));
  }

  async info(): Promise<RunInfo> {
    const file = path.join(this.runDir, 'run.json');
    if (!fs.existsSync(file)) return { runId: this.runId, sources: [], settings: {} };
    return readJsonFile(file, RunInfoSchema, 'run description');
  }

  async summary(): Promise<RunSummaryFile> {
    return readJsonFile(runPaths(this.runDir).summary, RunSummaryFileSchema, 'run summary');
  }

  records(): AsyncIterable<ProductRecord> {
    return jsonLines(runPaths(this.runDir).dataset, ProductRecordSchema);
  }

  rejections(): AsyncIterable<Rejection> {
    return jsonLines(runPaths(this.runDir).rejections, RejectionSchema);
  }

  async exchanges(functionId: string): Promise<ExchangeIndexEntry[]> {
    return (await listExchanges(this.dataDir, functionId)).filter((e) => e.runId === undefined || e.runId === this.runId);
  }

  async exchange(exchangeKey: string): Promise<ExchangeView> {
    const parsed = ExchangeViewSchema.safeParse(await this.store.getJson(exchangeKey));
    if (!parsed.success) throw new RunFileError(`exchange ${exchangeKey}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    return parsed.data;
  }
}
