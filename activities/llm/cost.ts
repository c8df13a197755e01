/**
 * Token and cost accounting: the estimated price of one call from the configured price table,
 * and totals of many calls grouped by function, repository or run.
 */
import type { Config } from '../../temporal.config';

export type PriceTable = Config['llm']['prices'];

/** Estimated USD cost of a call; a model missing from the price table costs 0 (unknown, not free). */
export function estimateCostUsd(prices: PriceTable, model: string, promptTokens: number, completionTokens: number): number {
  const price = prices[model];
  if (!price) return 0;
  return (promptTokens * price.inputPerMTok + completionTokens * price.outputPerMTok) / 1_000_000;
}

export interface UsageTotals {
  calls: number;
  /** Calls answered from the cache (zero tokens, zero cost). */
  cachedCalls: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
  /** Sum of call latencies, a measure of time spent waiting on the model. */
  latencyMs: number;
}

/** What accounting needs to know about one call: its outcome plus what it was about. */
export interface UsageEntry {
  functionId?: string;
  repoId?: string;
  runId?: string;
  step?: string;
  model?: string;
  cached: boolean;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
  latencyMs?: number;
}

export function emptyUsage(): UsageTotals {
  return { calls: 0, cachedCalls: 0, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyMs: 0 };
}

export function addUsage(totals: UsageTotals, entry: UsageEntry): UsageTotals {
  return {
    calls: totals.calls + 1,
    cachedCalls: totals.cachedCalls + (entry.cached ? 1 : 0),
    promptTokens: totals.promptTokens + entry.promptTokens,
    completionTokens: totals.completionTokens + entry.completionTokens,
    costUsd: totals.costUsd + entry.costUsd,
    latencyMs: totals.latencyMs + (entry.latencyMs ?? 0),
  };
}

export function sumUsage(entries: Iterable<UsageEntry>): UsageTotals {
  let totals = emptyUsage();
  for (const e of entries) totals = addUsage(totals, e);
  return totals;
}

export function mergeUsage(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    calls: a.calls + b.calls,
    cachedCalls: a.cachedCalls + b.cachedCalls,
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    costUsd: a.costUsd + b.costUsd,
    latencyMs: a.latencyMs + b.latencyMs,
  };
}

export type UsageDimension = 'functionId' | 'repoId' | 'runId' | 'step' | 'model';

/** Totals per value of one dimension (entries without that tag are grouped under ''). */
export function usageBy(entries: Iterable<UsageEntry>, dimension: UsageDimension): Map<string, UsageTotals> {
  const out = new Map<string, UsageTotals>();
  for (const e of entries) {
    const key = e[dimension] ?? '';
    out.set(key, addUsage(out.get(key) ?? emptyUsage(), e));
  }
  return out;
}
