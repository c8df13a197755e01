/** A model without a price reads as "price unknown", never as $0. */
import { formatCostUsd, unpricedModels, unpricedModelsOfSettings } from '../../../activities/llm/prices';
import { loadConfig } from '../../../temporal.config';

describe('prices', () => {
  it('finds the models of a configuration that have no price', () => {
    expect(unpricedModels(loadConfig({ env: {} }).llm)).toEqual([]);
    const ollama = loadConfig({ env: { OPENAI_MODEL: 'qwen2.5-coder:7b', REPOST_LLM_MODELS_CHECK: 'gpt-4o-mini' } });
    expect(unpricedModels(ollama.llm)).toEqual(['qwen2.5-coder:7b']);
    expect(unpricedModelsOfSettings({ llm: ollama.llm, loops: { solvability: { model: 'llama3.1:8b' } } })).toEqual(['qwen2.5-coder:7b', 'llama3.1:8b']);
  });

  it('says price unknown instead of $0, and both when part of the calls were priced', () => {
    expect(formatCostUsd(1.23456, [])).toBe('$1.2346');
    expect(formatCostUsd(0, [])).toBe('$0.0000');
    expect(formatCostUsd(0, ['qwen2.5-coder:7b'])).toBe('price unknown for qwen2.5-coder:7b (not in llm.prices)');
    expect(formatCostUsd(0.5, ['scripted'], 2)).toBe('$0.50 + price unknown for scripted (not in llm.prices)');
  });
});
