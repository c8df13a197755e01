/** Token and cost totals of the evaluation's LLM calls, added up step by step. */
import type { ChatOutcome } from '../llm/types';
import type { Usage } from './contracts';

export function noUsage(): Usage {
  return { calls: 0, cachedCalls: 0, promptTokens: 0, completionTokens: 0, costUsd: 0 };
}

export function usageOf(answer: Pick<ChatOutcome, 'cached' | 'promptTokens' | 'completionTokens' | 'costUsd'>): Usage {
  return { calls: 1, cachedCalls: answer.cached ? 1 : 0, promptTokens: answer.promptTokens, completionTokens: answer.completionTokens, costUsd: answer.costUsd };
}

export function addUsages(...all: (Usage | null | undefined)[]): Usage {
  const out = noUsage();
  for (const u of all) {
    if (!u) continue;
    out.calls += u.calls;
    out.cachedCalls += u.cachedCalls;
    out.promptTokens += u.promptTokens;
    out.completionTokens += u.completionTokens;
    out.costUsd += u.costUsd;
  }
  return out;
}
