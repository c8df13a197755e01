import { ConfigError, envNameFor, loadConfig } from '../../../temporal.config';

describe('configuration', () => {
  it('has defaults that validate', () => {
    const c = loadConfig({ env: {} });
    expect(c.temporal.address).toBeUndefined();
    expect(c.temporal.taskQueues.llm).not.toBe(c.temporal.taskQueues.sandbox);
    expect(c.loops.debugRounds).toBeGreaterThan(0);
    expect(c.crawl.maxFunctionsPerRepo).toBe(30);
  });

  it('derives an environment variable for every key and coerces its type', () => {
    expect(envNameFor('sandbox.memoryMb')).toBe('REPOST_SANDBOX_MEMORY_MB');
    const c = loadConfig({
      env: { REPOST_SANDBOX_MEMORY_MB: '512', REPOST_SANDBOX_POOL_ENABLED: 'false', REPOST_CRAWL_LICENSES: 'mit, apache-2.0', REPOST_LLM_MODELS_DEBUG: 'small-model' },
    });
    expect(c.sandbox.memoryMb).toBe(512);
    expect(c.sandbox.pool.enabled).toBe(false);
    expect(c.crawl.licenses).toEqual(['mit', 'apache-2.0']);
    expect(c.llm.models.debug).toBe('small-model');
  });

  it('carries the analysis filters, each rule a switch', () => {
    const c = loadConfig({ env: { REPOST_ANALYSIS_RULES_REQUIRE_DOCSTRING: 'yes', REPOST_ANALYSIS_EXTRA_KEYWORDS: 'boto3,torch', REPOST_ANALYSIS_MAX_LINES: '80' } });
    expect(c.analysis.rules.requireDocstring).toBe(true);
    expect(c.analysis.rules.noDunder).toBe(true);
    expect(c.analysis.extraKeywords).toEqual(['boto3', 'torch']);
    expect(c.analysis.maxLines).toBe(80);
    expect(() => loadConfig({ env: { REPOST_ANALYSIS_RULES_NO_DUNDER: 'maybe' } })).toThrow(/analysis\.rules\.noDunder \(from REPOST_ANALYSIS_RULES_NO_DUNDER\)/);
  });

  it('honours the ecosystem names', () => {
    const c = loadConfig({ env: { TEMPORAL_ADDRESS: 'temporal.internal:7233', OPENAI_BASE_URL: 'http://vllm:8000/v1', OPENAI_API_KEY: 'k' } });
    expect(c.temporal.address).toBe('temporal.internal:7233');
    expect(c.llm.baseURL).toBe('http://vllm:8000/v1');
    expect(c.llm.apiKey).toBe('k');
  });

  it('fails at start with a message naming the key and the variable', () => {
    expect(() => loadConfig({ env: { REPOST_SANDBOX_MEMORY_MB: 'lots' } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { REPOST_SANDBOX_MEMORY_MB: 'lots' } })).toThrow(/sandbox\.memoryMb \(from REPOST_SANDBOX_MEMORY_MB\)/);
    expect(() => loadConfig({ env: { REPOST_LOOPS_COVERAGE_THRESHOLD: '1.5' } })).toThrow(/loops\.coverageThreshold/);
    expect(() => loadConfig({ env: { OPENAI_BASE_URL: 'not a url' } })).toThrow(/llm\.baseURL \(from OPENAI_BASE_URL\)/);
  });

  it('applies explicit overrides last', () => {
    const c = loadConfig({ env: { REPOST_LOOPS_DEBUG_ROUNDS: '5' }, overrides: { loops: { debugRounds: 1 } } });
    expect(c.loops.debugRounds).toBe(1);
    expect(c.loops.coverageRounds).toBe(loadConfig({ env: {} }).loops.coverageRounds);
  });
});
