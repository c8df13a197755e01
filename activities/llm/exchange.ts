/**
 * The recorded form of one LLM exchange, and the per-function index of exchanges, so a user
 * can read exactly what the model was asked and answered for any function
 * (`listExchanges(dataDir, functionId)`, then `store.getJson(exchangeKey)`).
 *
 * Exchanges live in the content-addressed artifact store; the index is an append-only JSON
 * lines file per function id under `<dataDir>/llm-index/`. One short line per call is written
 * with a single append, so concurrent writers do not interleave and a crash loses at most the
 * line being written (which the reader skips).
 */
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { z } from 'zod';
import type { ChatMessage, LlmStep } from './types';

export const EXCHANGE_SCHEMA = 'repost.llm-exchange/v1';

export interface ExchangeRecord {
  schema: typeof EXCHANGE_SCHEMA;
  step: LlmStep;
  functionId: string;
  runId?: string;
  repoId?: string;
  promptId?: string;
  promptVersion?: string;
  attempt: number;
  baseURL: string;
  request: { model: string; messages: ChatMessage[]; temperature: number; maxTokens: number };
  /** Null when the call failed. */
  response: { text: string; finishReason: string | null; model: string; id?: string } | null;
  error?: { kind: 'transient' | 'permanent'; message: string; status?: number; retryAfterMs?: number };
  usage: { promptTokens: number; completionTokens: number; /** true when the endpoint reported no usage. */ estimated: boolean };
  costUsd: number;
  latencyMs: number;
  /** Milliseconds spent waiting for the rate limiter before the call went out. */
  queuedMs: number;
  cached: boolean;
  cacheKey: string;
  /** For a cache hit: the exchange whose answer was reused. */
  sourceExchangeKey?: string;
  recordedAt: string;
}

export const ExchangeIndexEntrySchema = z.object({
  exchangeKey: z.string(),
  step: z.string(),
  model: z.string(),
  cached: z.boolean(),
  promptTokens: z.number(),
  completionTokens: z.number(),
  costUsd: z.number(),
  latencyMs: z.number(),
  functionId: z.string(),
  runId: z.string().optional(),
  repoId: z.string().optional(),
  promptId: z.string().optional(),
  promptVersion: z.string().optional(),
  attempt: z.number().optional(),
  finishReason: z.string().nullable().optional(),
  error: z.string().optional(),
  recordedAt: z.string(),
});

export type ExchangeIndexEntry = z.infer<typeof ExchangeIndexEntrySchema>;

export function llmIndexDir(dataDir: string): string {
  return path.join(dataDir, 'llm-index');
}

/** Function ids become file names; anything outside a safe alphabet is replaced. */
export function indexFileOf(dataDir: string, functionId: string): string {
  const safe = functionId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 200) || '_';
  return path.join(llmIndexDir(dataDir), `${safe}.jsonl`);
}

/** Index directories known to exist, so the hot path does one append and no mkdir. */
const createdDirs = new Set<string>();

export async function appendExchangeIndex(dataDir: string, entry: ExchangeIndexEntry): Promise<void> {
  const file = indexFileOf(dataDir, entry.functionId);
  const dir = path.dirname(file);
  const line = JSON.stringify(entry) + '\n';
  if (!createdDirs.has(dir)) {
    await fsp.mkdir(dir, { recursive: true });
    createdDirs.add(dir);
  }
  try {
    await fsp.appendFile(file, line);
  } catch (err) {
    // The directory was removed behind our back (a cleaned data directory): recreate it once.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await fsp.mkdir(dir, { recursive: true });
    await fsp.appendFile(file, line);
  }
}

/** The exchanges recorded for a function, oldest first. Lines that do not parse are skipped. */
export async function listExchanges(dataDir: string, functionId: string): Promise<ExchangeIndexEntry[]> {
  let text: string;
  try {
    text = await fsp.readFile(indexFileOf(dataDir, functionId), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: ExchangeIndexEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      continue;
    }
    const parsed = ExchangeIndexEntrySchema.safeParse(json);
    // Sanitised file names could in principle collide; keep only this function's lines.
    if (parsed.success && parsed.data.functionId === functionId) out.push(parsed.data);
  }
  return out;
}

/** Every indexed exchange under the data directory (all functions), for totals per repository or run. */
export async function listAllExchanges(dataDir: string): Promise<ExchangeIndexEntry[]> {
  let files: string[];
  try {
    files = (await fsp.readdir(llmIndexDir(dataDir))).filter((f) => f.endsWith('.jsonl')).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: ExchangeIndexEntry[] = [];
  for (const file of files) {
    const text = await fsp.readFile(path.join(llmIndexDir(dataDir), file), 'utf8');
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try {
        const parsed = ExchangeIndexEntrySchema.safeParse(JSON.parse(line));
        if (parsed.success) out.push(parsed.data);
      } catch {
        // A torn last line from a crash: skip it.
      }
    }
  }
  return out;
}
