/**
 * The recorded form of one LLM exchange, and the index entry that lists it per function and per
 * run, so a user can read exactly what the model was asked and answered for any function
 * (`store.listExchanges(functionId)`, then `store.getJson(exchangeKey)`). Exchanges are artifacts;
 * the index lives in the store (`activities/store`).
 */
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
  /** Set when the caller reviewed the answer: the checks that refused it (empty: usable). See `refusals.ts`. */
  refusedBy?: string[];
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
  /** The checks that refused the answer (empty: it passed); absent when nobody reviewed it. */
  refusedBy: z.array(z.string()).optional(),
  recordedAt: z.string(),
});

export type ExchangeIndexEntry = z.infer<typeof ExchangeIndexEntrySchema>;
