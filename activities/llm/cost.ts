/**
 * The estimated price of one call from the configured price table. (Totals of many calls are the
 * store's `Usage`: `activities/store/usage.ts`.)
 */
import type { Config } from '../../temporal.config';

export type PriceTable = Config['llm']['prices'];

/**
 * Estimated USD cost of a call; a model missing from the price table costs 0 (unknown, not free).
 * `cachedPromptTokens` of the prompt's tokens (the endpoint's prompt cache served them) are priced
 * at `cachedInputPerMTok` (default: the input price), the rest at the input price.
 */
export function estimateCostUsd(
  prices: PriceTable,
  model: string,
  promptTokens: number,
  completionTokens: number,
  mode: 'live' | 'batch' = 'live',
  cachedPromptTokens = 0,
): number {
  const price = prices[model];
  if (!price) return 0;
  const cached = Math.min(Math.max(cachedPromptTokens, 0), promptTokens);
  if (mode === 'batch') {
    // The Batch API charges half; a price table may say otherwise per model.
    const input = price.batchInputPerMTok ?? price.inputPerMTok / 2;
    const output = price.batchOutputPerMTok ?? price.outputPerMTok / 2;
    const cachedInput = price.cachedInputPerMTok !== undefined ? price.cachedInputPerMTok / 2 : input;
    return ((promptTokens - cached) * input + cached * cachedInput + completionTokens * output) / 1_000_000;
  }
  const cachedInput = price.cachedInputPerMTok ?? price.inputPerMTok;
  return ((promptTokens - cached) * price.inputPerMTok + cached * cachedInput + completionTokens * price.outputPerMTok) / 1_000_000;
}
