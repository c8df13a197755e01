/**
 * Which models a run asks for have no price, and how a cost estimate reads when some do not: a
 * model missing from `llm.prices` is counted at $0, which is "price unknown", never "free".
 */
import type { Config } from '../../temporal.config';

type LlmPrices = Pick<Config['llm'], 'model' | 'models' | 'prices'>;

/** The models of `llm` (the default, each step's) and `more`, that the price table does not list. */
export function unpricedModels(llm: LlmPrices, more: readonly (string | undefined)[] = []): string[] {
  const named = [llm.model, ...Object.values(llm.models ?? {}), ...more].filter((m): m is string => typeof m === 'string' && m.length > 0);
  return [...new Set(named)].filter((m) => !llm.prices[m]);
}

/** `$1.2345`; `price unknown (no price for m in llm.prices)` when nothing was priced; both when some was. */
export function formatCostUsd(usd: number, unpriced: readonly string[], digits = 4): string {
  if (unpriced.length === 0) return `$${usd.toFixed(digits)}`;
  const unknown = `price unknown for ${unpriced.join(', ')} (not in llm.prices)`;
  return usd > 0 ? `$${usd.toFixed(digits)} + ${unknown}` : unknown;
}

/** The unpriced models of a run from its frozen settings (`RunSettings.config`), or of a configuration. */
export function unpricedModelsOfSettings(config: Record<string, unknown>): string[] {
  const llm = config.llm as Partial<LlmPrices> | undefined;
  const loops = config.loops as { solvability?: { model?: string } } | undefined;
  if (!llm?.model || !llm.prices) return [];
  return unpricedModels({ model: llm.model, models: llm.models ?? {}, prices: llm.prices }, [loops?.solvability?.model]);
}
