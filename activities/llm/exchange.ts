/**
 * The recorded form of one LLM exchange, kept as an artifact; the store indexes it per function
 * and per run (`activities/store/exchanges.ts`), so a user can read exactly what the model was
 * asked and answered for any function.
 */
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
  usage: {
    promptTokens: number;
    completionTokens: number;
    /** true when the endpoint reported no usage. */
    estimated: boolean;
    /** Of the prompt tokens, those the endpoint's prompt cache served (absent: none reported). */
    cachedPromptTokens?: number;
  };
  costUsd: number;
  latencyMs: number;
  /** Milliseconds spent waiting for the rate limiter before the call went out. */
  queuedMs: number;
  cached: boolean;
  /** `batch` for an answer that came in a batch (batch mode; priced at the batch price); absent for a live call. */
  mode?: 'batch';
  /** For a batch answer: the batch and the request's `custom_id` in it. */
  batch?: { batchId: string; customId: string };
  cacheKey: string;
  /** For a cache hit: the exchange whose answer was reused. */
  sourceExchangeKey?: string;
  /** Set when the caller reviewed the answer: the checks that refused it (empty: usable). See `activities/store/refusals.ts`. */
  refusedBy?: string[];
  recordedAt: string;
}
