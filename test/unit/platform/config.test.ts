import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { applyRunSettings, frozenPipelineSettings, parseSettingOverrides, pipelineSettingsFrom, runSettingsFrom } from '../../../activities/run-settings';
import { ConfigError, configKeys, envNameFor, loadConfig, processOnlyPaths, RENAMED_KEYS, type ConfigKey } from '../../../temporal.config';

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
      env: { REPOST_SANDBOX_MEMORY_MB: '512', REPOST_SANDBOX_POOL_ENABLED: 'false', REPOST_CRAWL_GITHUB_LICENSES: 'mit, apache-2.0', REPOST_LLM_MODELS_DEBUG: 'small-model' },
    });
    expect(c.sandbox.memoryMb).toBe(512);
    expect(c.sandbox.pool.enabled).toBe(false);
    expect(c.crawl.github.licenses).toEqual(['mit', 'apache-2.0']);
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
    expect(c.llm.baseUrl).toBe('http://vllm:8000/v1');
    expect(c.llm.apiKey).toBe('k');
  });

  it('fails at start with a message naming the key and the variable', () => {
    expect(() => loadConfig({ env: { REPOST_SANDBOX_MEMORY_MB: 'lots' } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { REPOST_SANDBOX_MEMORY_MB: 'lots' } })).toThrow(/sandbox\.memoryMb \(from REPOST_SANDBOX_MEMORY_MB\)/);
    expect(() => loadConfig({ env: { REPOST_LOOPS_COVERAGE_THRESHOLD_TRAIN: '1.5' } })).toThrow(/loops\.coverageThreshold\.train/);
    expect(() => loadConfig({ env: { OPENAI_BASE_URL: 'not a url' } })).toThrow(/llm\.baseUrl \(from OPENAI_BASE_URL\)/);
  });

  it('applies explicit overrides last', () => {
    const c = loadConfig({ env: { REPOST_LOOPS_DEBUG_ROUNDS: '5' }, overrides: { loops: { debugRounds: 1 } } });
    expect(c.loops.debugRounds).toBe(1);
    expect(c.loops.coverageRounds).toBe(loadConfig({ env: {} }).loops.coverageRounds);
  });
});

describe('every key of the schema', () => {
  /** A value each key accepts that differs from its default, in the form an environment variable gives it. */
  function envValueFor(key: ConfigKey, current: unknown): string[] {
    switch (key.type) {
      case 'boolean':
        return [String(!(current ?? false))];
      case 'number': {
        const n = typeof current === 'number' ? current : 0;
        return [n + 1, n / 2, 1, 7].filter((v) => v !== current && v > 0).map(String);
      }
      case 'array':
        return ['alpha,beta'];
      case 'object':
        return ['{"some-model":{"inputPerMTok":1,"outputPerMTok":2}}'];
      default:
        if (key.values) return key.values.filter((v) => v !== current);
        return ['http://example.test/v1', 'postgres://user@db.test/repost', '2020-02-02', 'a-value'].filter((v) => v !== current);
    }
  }

  it('is read from its own environment variable', () => {
    const defaults = loadConfig({ env: {} });
    const unread: string[] = [];
    for (const key of configKeys()) {
      const current = key.path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], defaults);
      const read = envValueFor(key, current).some((value) => {
        let config;
        try {
          config = loadConfig({ env: { [key.env]: value } });
        } catch {
          return false;
        }
        const got = key.path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], config);
        return got !== undefined && JSON.stringify(got) !== JSON.stringify(current) && (key.path === 'dataDir' || JSON.stringify(got).includes(value.split(',')[0]!.replace(/[{}"]/g, '').split(':')[0]!));
      });
      if (!read) unread.push(`${key.path} (${key.env})`);
    }
    expect(unread).toEqual([]);
    // Keys without a default (optional ones) have their variable too.
    expect(configKeys().map((k) => k.env)).toEqual(expect.arrayContaining(['REPOST_STORE_URL', 'REPOST_LLM_MODELS_SOLVE', 'REPOST_SANDBOX_PACKAGES_INDEX_URL', 'REPOST_GITHUB_TOKEN']));
  });

  it('is a run setting unless the schema marks it as the process’s own', () => {
    const processOwn = configKeys().filter((k) => k.perProcess).map((k) => k.path);
    for (const p of ['dataDir', 'store.url', 'temporal.address', 'workers.llmConcurrency', 'llm.baseUrl', 'llm.apiKey', 'sandbox.image', 'sandbox.packages.indexUrl', 'github.token']) expect(processOwn).toContain(p);
    for (const p of ['llm.model', 'llm.timeoutSec', 'loops.debugRounds', 'sandbox.memoryMb', 'crawl.github.licenses', 'analysis.rules.noDunder']) expect(processOwn).not.toContain(p);
    expect(processOnlyPaths()).toEqual(expect.arrayContaining(['store', 'temporal', 'workers', 'github', 'llm.baseUrl', 'sandbox.pool']));
  });
});

describe('keys renamed in this release', () => {
  it('are read under their old environment variables, with a warning, units converted', () => {
    const warnings: string[] = [];
    const c = loadConfig({ env: { REPOST_LLM_TIMEOUT_MS: '90000', REPOST_CRAWL_LICENSES: 'mit,bsd-3-clause', REPOST_CRAWL_TRAIN_WINDOW_FROM: '2022-01-01' }, warn: (m) => warnings.push(m) });
    expect(c.llm.timeoutSec).toBe(90);
    expect(c.crawl.github.licenses).toEqual(['mit', 'bsd-3-clause']);
    expect(c.crawl.github.trainWindow).toEqual({ from: '2022-01-01', to: '2024-08-31' });
    expect(warnings).toEqual([
      'REPOST_LLM_TIMEOUT_MS is now REPOST_LLM_TIMEOUT_SEC (in seconds); the old name is read until the next release',
      'REPOST_CRAWL_LICENSES is now REPOST_CRAWL_GITHUB_LICENSES; the old name is read until the next release',
      'REPOST_CRAWL_TRAIN_WINDOW_FROM is now REPOST_CRAWL_GITHUB_TRAIN_WINDOW_FROM; the old name is read until the next release',
    ]);
    // The new name wins when both are given.
    expect(loadConfig({ env: { REPOST_LLM_TIMEOUT_MS: '90000', REPOST_LLM_TIMEOUT_SEC: '30' }, warn: () => undefined }).llm.timeoutSec).toBe(30);
    // Nothing is said when only new names are used.
    const quiet: string[] = [];
    loadConfig({ env: { REPOST_LLM_TIMEOUT_SEC: '30', OPENAI_BASE_URL: 'http://x.test/v1', REPOST_GITHUB_BASE_URL: 'http://gh.test' }, warn: (m) => quiet.push(m) });
    expect(quiet).toEqual([]);
  });

  it('are read under their old names in the configuration file, with a warning', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'repost-config-')), 'config.json');
    fs.writeFileSync(file, JSON.stringify({ llm: { baseURL: 'http://old.test/v1', timeoutMs: 45000 }, github: { baseURL: 'http://gh.test' }, crawl: { minStars: 4, evalWindow: { from: '2025-01-01', to: '2025-12-31' } } }));
    const warnings: string[] = [];
    const c = loadConfig({ env: { REPOST_CONFIG: file }, warn: (m) => warnings.push(m) });
    expect(c.llm.baseUrl).toBe('http://old.test/v1');
    expect(c.llm.timeoutSec).toBe(45);
    expect(c.github.baseUrl).toBe('http://gh.test');
    expect(c.crawl.github.minStars).toBe(4);
    expect(c.crawl.github.evalWindow).toEqual({ from: '2025-01-01', to: '2025-12-31' });
    expect(warnings).toHaveLength(5);
    expect(warnings[1]).toBe(`${file}: llm.timeoutMs is now llm.timeoutSec (in seconds); the old name is read until the next release`);
    expect(RENAMED_KEYS.map((r) => r.from)).toEqual(expect.arrayContaining(['llm.baseURL', 'llm.timeoutMs', 'github.baseURL', 'crawl.licenses', 'crawl.maxRepoSizeKb', 'crawl.minStars', 'crawl.trainWindow', 'crawl.evalWindow']));
  });

  it('keep their meaning in a run frozen before the rename', () => {
    const worker = loadConfig({ env: {} });
    const frozenEarlier = { schema: 'repost.run-settings/v1' as const, config: { llm: { model: 'old-run-model', timeoutMs: 30000 }, crawl: { licenses: ['apache-2.0'] } }, promptVersions: {} };
    const applied = applyRunSettings(worker, frozenEarlier);
    expect(applied.llm.model).toBe('old-run-model');
    expect(applied.llm.timeoutSec).toBe(30);
    expect(applied.crawl.github.licenses).toEqual(['apache-2.0']);
    // Replay's --set takes an old name too, and still refuses a process key under its old name.
    const warnings: string[] = [];
    expect(parseSettingOverrides(['llm.timeoutMs=60000'], (m) => warnings.push(m))).toEqual({ llm: { timeoutSec: 60 } });
    expect(warnings).toEqual(['--set llm.timeoutMs is now llm.timeoutSec (in seconds); the old name is read until the next release']);
    expect(() => parseSettingOverrides(['llm.baseURL=http://elsewhere/v1'])).toThrow(/a process setting/);
  });
});

describe('per-split settings', () => {
  const PER_SPLIT = ['loops.coverageThreshold', 'loops.requireAstMatch', 'loops.mutation.minScore', 'loops.stability.runs', 'loops.solvability.enabled', 'analysis.contextTokenBudget'];

  it('all have the shape { train, eval }, with the defaults RepoST uses', () => {
    const paths = configKeys().map((k) => k.path);
    for (const p of PER_SPLIT) expect(paths.filter((k) => k.startsWith(`${p}.`))).toEqual([`${p}.train`, `${p}.eval`]);
    const loops = loadConfig({ env: {} }).loops;
    expect([loops.coverageThreshold, loops.requireAstMatch, loops.mutation.minScore, loops.stability.runs, loops.solvability.enabled]).toEqual([
      { train: 0.8, eval: 1 }, { train: false, eval: true }, { train: 0, eval: 0 }, { train: 0, eval: 0 }, { train: false, eval: true },
    ]);
  });

  it('are read under their old single-value names from the file, the environment and --set, with a warning each', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'repost-config-')), 'config.json');
    fs.writeFileSync(file, JSON.stringify({ loops: { coverageThreshold: 0.7, evalCoverageThreshold: 0.9, evalRequiresAstMatch: false, mutation: { minScore: 0.5, evalMinScore: 0.6 }, stability: { runs: 2 } } }));
    const warnings: string[] = [];
    const fromFile = loadConfig({ env: { REPOST_CONFIG: file }, warn: (m) => warnings.push(m) }).loops;
    expect([fromFile.coverageThreshold, fromFile.requireAstMatch, fromFile.mutation.minScore, fromFile.stability.runs]).toEqual([
      { train: 0.7, eval: 0.9 }, { train: false, eval: false }, { train: 0.5, eval: 0.6 }, { train: 2, eval: 2 },
    ]);
    expect(warnings).toContain(`${file}: loops.evalCoverageThreshold is now loops.coverageThreshold.eval (a value per split); the old name is read until the next release`);
    expect(warnings).toHaveLength(7);

    const envWarnings: string[] = [];
    const fromEnv = loadConfig({ env: { REPOST_LOOPS_COVERAGE_THRESHOLD: '0.6', REPOST_LOOPS_STABILITY_RUNS: '3', REPOST_LOOPS_STABILITY_RUNS_EVAL: '4' }, warn: (m) => envWarnings.push(m) }).loops;
    expect(fromEnv.coverageThreshold).toEqual({ train: 0.6, eval: 1 });
    // The new name wins where both are given.
    expect(fromEnv.stability.runs).toEqual({ train: 3, eval: 4 });
    expect(envWarnings[0]).toBe('REPOST_LOOPS_COVERAGE_THRESHOLD is now REPOST_LOOPS_COVERAGE_THRESHOLD_TRAIN (a value per split); the old name is read until the next release');
    // A value bad under the old name is reported under the new one, with the variable it came from.
    expect(() => loadConfig({ env: { REPOST_LOOPS_COVERAGE_THRESHOLD: '1.5' }, warn: () => undefined })).toThrow(/loops\.coverageThreshold\.train \(from REPOST_LOOPS_COVERAGE_THRESHOLD\)/);

    expect(parseSettingOverrides(['loops.mutation.evalMinScore=0.4', 'loops.coverageThreshold={"eval":0.95}'])).toEqual({ loops: { mutation: { minScore: { eval: 0.4 } }, coverageThreshold: { eval: 0.95 } } });
  });

  it('keep their meaning in a run frozen before: its configuration and its pipeline settings (the mutants\' sample taken from its configuration)', () => {
    const worker = loadConfig({ env: {} });
    const current = pipelineSettingsFrom(worker);
    const oldLoops: Record<string, unknown> = { ...(runSettingsFrom(worker).config.loops as Record<string, unknown>), coverageThreshold: 0.5, evalCoverageThreshold: 0.95, evalRequiresAstMatch: true, mutation: { enabled: true, minScore: 0.1, evalMinScore: 0.2, rounds: 1, cap: 12, seed: 4 }, stability: { runs: 2, keepFlaky: false } };
    delete oldLoops.requireAstMatch;
    const { coverageThreshold: _c, requireAstMatch: _a, ...rest } = current;
    void _c;
    void _a;
    const frozen = {
      schema: 'repost.run-settings/v1' as const,
      config: { loops: oldLoops },
      promptVersions: {},
      pipeline: { ...rest, coverageThreshold: 0.5, evalCoverageThreshold: 0.95, evalRequiresAstMatch: true, mutation: { enabled: true, minScore: 0.1, evalMinScore: 0.2, rounds: 1 }, stability: { runs: 2, keepFlaky: false } },
    };
    const applied = applyRunSettings(worker, frozen).loops;
    expect([applied.coverageThreshold, applied.mutation.minScore, applied.stability.runs]).toEqual([{ train: 0.5, eval: 0.95 }, { train: 0.1, eval: 0.2 }, { train: 2, eval: 2 }]);
    const pipeline = frozenPipelineSettings(frozen, worker);
    expect(pipeline).toMatchObject({
      coverageThreshold: { train: 0.5, eval: 0.95 },
      requireAstMatch: { train: false, eval: true },
      mutation: { enabled: true, minScore: { train: 0.1, eval: 0.2 }, rounds: 1, cap: 12, seed: 4 },
      stability: { runs: { train: 2, eval: 2 }, keepFlaky: false },
    });
    expect(pipeline).not.toHaveProperty('evalCoverageThreshold');
    // Settings frozen in today's shape come back as they were.
    expect(frozenPipelineSettings({ ...frozen, pipeline: current }, worker)).toEqual(current);
  });
});
