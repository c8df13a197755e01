/**
 * The index of recorded LLM exchanges, per function and per run: what the store keeps about each
 * call so a user can find exactly what the model was asked and answered for any function
 * (`store.listExchanges(functionId)`, then `store.getJson(exchangeKey)` for the exchange itself),
 * and so a run's usage can be summed without reading the exchanges.
 */
import { z } from 'zod';

export const ExchangeIndexEntrySchema = z.object({
  exchangeKey: z.string(),
  step: z.string(),
  model: z.string(),
  cached: z.boolean(),
  /** `batch` for an answer that came in a batch; absent for a live call. */
  mode: z.enum(['live', 'batch']).optional(),
  promptTokens: z.number(),
  completionTokens: z.number(),
  /** Of the prompt tokens, those the endpoint's prompt cache served; absent: none. */
  cachedPromptTokens: z.number().optional(),
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
  /** The checks that refused the answer (empty: it passed); absent when nobody reviewed it (see `refusals.ts`). */
  refusedBy: z.array(z.string()).optional(),
  recordedAt: z.string(),
});

export type ExchangeIndexEntry = z.infer<typeof ExchangeIndexEntrySchema>;
