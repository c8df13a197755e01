/**
 * LLM usage: how many calls, tokens and how much estimated cost and waiting a set of exchanges
 * adds up to. One shape serves a single call, a step, a function, a repository and a whole run
 * (the store sums a run's exchanges for progress views); one schema reads it back from files.
 */
import { z } from 'zod';

const count = z.number().int().nonnegative();

export const UsageSchema = z.object({
  calls: count,
  /** Calls answered from the cache (zero tokens, zero cost). */
  cachedCalls: count,
  promptTokens: count,
  /** Of the prompt tokens, those the endpoint's prompt cache served (priced at the cached price; 0 in files written before it was kept). */
  cachedPromptTokens: count.optional(),
  completionTokens: count,
  costUsd: z.number().nonnegative(),
  /** Sum of call latencies, a measure of time spent waiting on the model (0 in files written before it was kept). */
  latencyMs: z.number().nonnegative().default(0),
});
export type Usage = z.infer<typeof UsageSchema>;

/** What accounting needs to know about one call: its outcome plus what it was about. */
export interface UsageEntry {
  functionId?: string;
  repoId?: string;
  runId?: string;
  step?: string;
  model?: string;
  cached: boolean;
  /** `batch` for an answer that came in a batch; absent (live) otherwise. */
  mode?: 'live' | 'batch';
  promptTokens: number;
  cachedPromptTokens?: number;
  completionTokens: number;
  costUsd: number;
  latencyMs?: number;
}

export function emptyUsage(): Usage {
  return { calls: 0, cachedCalls: 0, promptTokens: 0, cachedPromptTokens: 0, completionTokens: 0, costUsd: 0, latencyMs: 0 };
}

/** One call as usage. */
export function callUsage(call: Pick<UsageEntry, 'cached' | 'promptTokens' | 'cachedPromptTokens' | 'completionTokens' | 'costUsd' | 'latencyMs'>): Usage {
  return {
    calls: 1,
    cachedCalls: call.cached ? 1 : 0,
    promptTokens: call.promptTokens,
    cachedPromptTokens: call.cachedPromptTokens ?? 0,
    completionTokens: call.completionTokens,
    costUsd: call.costUsd,
    latencyMs: call.latencyMs ?? 0,
  };
}

/** The sum of several usages (missing ones count as none). */
export function addUsage(...all: (Usage | null | undefined)[]): Usage {
  const out = emptyUsage();
  for (const u of all) {
    if (!u) continue;
    out.calls += u.calls;
    out.cachedCalls += u.cachedCalls;
    out.promptTokens += u.promptTokens;
    out.cachedPromptTokens = (out.cachedPromptTokens ?? 0) + (u.cachedPromptTokens ?? 0);
    out.completionTokens += u.completionTokens;
    out.costUsd += u.costUsd;
    out.latencyMs += u.latencyMs;
  }
  return out;
}

/** The usage of a set of calls. */
export function sumUsage(entries: Iterable<UsageEntry>): Usage {
  let totals = emptyUsage();
  for (const e of entries) totals = addUsage(totals, callUsage(e));
  return totals;
}

export type UsageDimension = 'functionId' | 'repoId' | 'runId' | 'step' | 'model';

/** Totals per value of one dimension (entries without that tag are grouped under ''). */
export function usageBy(entries: Iterable<UsageEntry>, dimension: UsageDimension): Map<string, Usage> {
  const out = new Map<string, Usage>();
  for (const e of entries) {
    const key = e[dimension] ?? '';
    out.set(key, addUsage(out.get(key), callUsage(e)));
  }
  return out;
}
