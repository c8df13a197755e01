/**
 * The estimated price of one call from the configured price table. (Totals of many calls are the
 * store's `Usage`: `activities/store/usage.ts`.)
 */
import type { Config } from '../../temporal.config';

export type PriceTable = Config['llm']['prices'];

/** Estimated USD cost of a call; a model missing from the price table costs 0 (unknown, not free). */
export function estimateCostUsd(prices: PriceTable, model: string, promptTokens: number, completionTokens: number, mode: 'live' | 'batch' = 'live'): number {
  const price = prices[model];
  if (!price) return 0;
  if (mode === 'batch') {
    // The Batch API charges half; a price table may say otherwise per model.
    const input = price.batchInputPerMTok ?? price.inputPerMTok / 2;
    const output = price.batchOutputPerMTok ?? price.outputPerMTok / 2;
    return (promptTokens * input + completionTokens * output) / 1_000_000;
  }
  return (promptTokens * price.inputPerMTok + completionTokens * price.outputPerMTok) / 1_000_000;
}
