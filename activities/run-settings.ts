/**
 * A run's settings, frozen when it starts (docs/architecture.md, invariant 10). Everything in the configuration
 * that shapes the dataset (models and sampling, loops and thresholds, analysis rules, sandbox
 * limits, crawl limits, prices) plus the prompt template versions travels with the run as one
 * artifact; every activity applies the run's settings over its own process's configuration, so a
 * worker started with another model still uses the run's. Only what belongs to a process stays
 * its own: where things are (data directory, store, Temporal, endpoints), credentials and
 * concurrency.
 *
 * The same artifact holds what the workflows need of the settings (`PipelineSettings`: loop
 * limits, thresholds, windows and the activities' time budgets, all derived from the
 * configuration), and a kind of run may add its own part (an evaluation's settings).
 */
import { z } from 'zod';
import { ConfigSchema, configKeys, currentKeyName, deepMerge, migrateRenamedKeys, processOnlyPaths, type Config } from '../temporal.config';
import type { PerSplit, PipelineSettings, SolvabilitySettings, TaskQueues } from './contracts';
import { modeForStep } from './llm/gateway';
import { loadPromptTemplate, PROMPT_KINDS } from './llm/prompts';
import type { LlmStep } from './llm/types';
import { sandboxActivityBudgetMs } from './sandbox/budget';
import { REPOST_SELECTION } from './analysis/presets';
import { DEFAULT_MUTATION_SETTINGS } from './sandbox/mutation';
import type { Artifacts } from './store/artifacts';
import { functionWorkflowBudgetMs, repoWorkflowBudgetMs } from './workflow-budgets';
import { unknownNameMessage } from './nearest-name';

/** Configuration paths that belong to a process, never to a run: the schema marks them (`perProcess`). */
export const PROCESS_ONLY_PATHS: readonly string[] = processOnlyPaths();

export const RUN_SETTINGS_SCHEMA = 'repost.run-settings/v1';

export const RunSettingsSchema = z.object({
  schema: z.literal(RUN_SETTINGS_SCHEMA),
  /** The configuration without the process-only paths. */
  config: z.record(z.string(), z.unknown()),
  /** Prompt template versions by kind, as the run started with them. */
  promptVersions: z.record(z.string(), z.string()),
});
export type RunSettings = z.infer<typeof RunSettingsSchema>;

function withoutPaths(value: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  const out = structuredClone(value);
  for (const p of paths) {
    const keys = p.split('.');
    let cur: Record<string, unknown> | undefined = out;
    for (const k of keys.slice(0, -1)) cur = cur?.[k] as Record<string, unknown> | undefined;
    if (cur) delete cur[keys[keys.length - 1]!];
  }
  return out;
}

export function promptVersionsNow(): Record<string, string> {
  return Object.fromEntries(PROMPT_KINDS.map((k) => [k, loadPromptTemplate(k).version]));
}

/** The settings a run freezes from the launcher's configuration. */
export function runSettingsFrom(config: Config): RunSettings {
  return { schema: RUN_SETTINGS_SCHEMA, config: withoutPaths(config as unknown as Record<string, unknown>, PROCESS_ONLY_PATHS), promptVersions: promptVersionsNow() };
}

/**
 * A run's frozen configuration under this release's key names. A run frozen while the context
 * budget was one value for both splits, and `analysis.preset=repost` laid its own budgets over it,
 * keeps the preset's budgets (what that run used), not its single value.
 */
function frozenConfig(config: Record<string, unknown>): Record<string, unknown> {
  const section = config.analysis as Record<string, unknown> | undefined;
  if (section?.preset === 'repost' && typeof section.contextTokenBudget === 'number') {
    return migrateRenamedKeys({ ...config, analysis: { ...section, contextTokenBudget: { ...REPOST_SELECTION.contextTokens } } });
  }
  return migrateRenamedKeys(config);
}

/** This process's configuration with the run's settings laid over it (validated again). */
export function applyRunSettings(config: Config, settings: RunSettings): Config {
  const own = config as unknown as Record<string, unknown>;
  // A run frozen before a key was renamed keeps its meaning under the new name.
  const merged = deepMerge(own, withoutPaths(frozenConfig(settings.config), PROCESS_ONLY_PATHS));
  const parsed = ConfigSchema.parse(merged);
  parsed.dataDir = config.dataDir;
  return parsed;
}

/**
 * `key=value` overrides of run settings (`replay.ts --set loops.debugRounds=5`). Values are read
 * as JSON when they parse (numbers, booleans, lists), else as strings. Process-only keys are
 * refused: they are not the run's to carry.
 */
export function parseSettingOverrides(pairs: string[], warn: (message: string) => void = () => undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const m = /^([A-Za-z][\w.]*)=(.*)$/s.exec(pair);
    if (!m) throw new Error(`--set ${pair}: expected key=value, e.g. loops.debugRounds=5`);
    const key = m[1]!;
    const named = currentKeyName(key);
    if (PROCESS_ONLY_PATHS.some((p) => named === p || named.startsWith(`${p}.`) || p.startsWith(`${named}.`))) throw new Error(`--set ${key}: a process setting, not a run setting (set it in the environment)`);
    const keyPaths = configKeys().map((k) => k.path);
    // A key of the schema, a part of one (a date window's `from`), or a whole group (`llm.models`).
    const known = keyPaths.some((p) => p === named || named.startsWith(`${p}.`) || p.startsWith(`${named}.`));
    if (!known) throw new Error(`--set ${unknownNameMessage('configuration key', key, keyPaths)}`);
    let value: unknown = m[2]!;
    try {
      value = JSON.parse(m[2]!);
    } catch {
      // a plain string
    }
    const keys = key.split('.');
    let cur = out;
    for (const k of keys.slice(0, -1)) cur = (cur[k] ??= {}) as Record<string, unknown>;
    cur[keys[keys.length - 1]!] = value;
  }
  return migrateRenamedKeys(out, (from, to, note) => warn(`--set ${from} is now ${to}${note ? ` (${note})` : ''}; the old name is read until the next release`));
}

/** The run's settings with overrides applied and validated (replay with `--set`). */
export function overrideRunSettings(settings: RunSettings, overrides: Record<string, unknown>): RunSettings {
  const config = deepMerge(frozenConfig(settings.config), migrateRenamedKeys(overrides));
  // Validate the result as a whole configuration would be.
  ConfigSchema.parse(config);
  return { ...settings, config };
}

/** The crawl's LLM activities and the step each asks (`aggregate` shares the sandbox step's mode, `check_tests` the check's). */
export const LLM_ACTIVITY_STEPS = {
  generateSandboxScript: 'sandbox',
  generateTests: 'tests',
  debugScript: 'debug',
  improveCoverage: 'coverage',
  checkFunctionality: 'check_functionality',
  checkTests: 'check_tests',
} as const satisfies Record<string, LlmStep>;

/**
 * The longest an LLM activity in batch mode may wait: the open batch's wait for more requests
 * (`llm.batch.maxWaitSec`), the batch's window (`llm.batch.windowSec`), two polls, and a live
 * call's budget for the delivery.
 */
export function llmBatchBudgetMs(config: Config): number {
  const b = config.llm.batch;
  return Math.ceil((b.maxWaitSec + b.windowSec + 2 * b.pollSec + config.llm.timeoutSec + config.llm.rateLimitWaitSec) * 1000);
}

/** What the workflows need of the configuration, fixed at the run's start. */
export function pipelineSettingsFrom(config: Config): PipelineSettings {
  const batched = Object.entries(LLM_ACTIVITY_STEPS)
    .filter(([, step]) => modeForStep(config.llm, step) === 'batch')
    .map(([name]) => name);
  const timeouts = {
    // The HTTP call's own timeout, plus the wait for a rate-limit slot; heartbeats catch a lost worker sooner.
    llmMs: (config.llm.timeoutSec + config.llm.rateLimitWaitSec) * 1000,
    sandboxMs: sandboxActivityBudgetMs(config.sandbox),
    ioMs: config.temporal.ioTimeoutSec * 1000,
    heartbeatMs: config.temporal.heartbeatTimeoutSec * 1000,
    ...(batched.length > 0 ? { llmBatchMs: llmBatchBudgetMs(config) } : {}),
  };
  // A child's budget counts each LLM step at the longest it may take.
  const budgets = { ...timeouts, llmMs: Math.max(timeouts.llmMs, timeouts.llmBatchMs ?? 0) };
  const loops = config.loops;
  const child = config.temporal.childTimeoutSec;
  return {
    debugRounds: config.loops.debugRounds,
    coverageRounds: config.loops.coverageRounds,
    coverageThreshold: { ...loops.coverageThreshold },
    requireAstMatch: { ...loops.requireAstMatch },
    regenerateAttempts: loops.regenerateAttempts,
    mutation: { enabled: loops.mutation.enabled, minScore: { ...loops.mutation.minScore }, rounds: loops.mutation.rounds, cap: loops.mutation.cap, seed: loops.mutation.seed },
    stability: { runs: { ...loops.stability.runs }, keepFlaky: loops.stability.keepFlaky },
    maxFunctionsPerRepo: config.crawl.maxFunctionsPerRepo,
    targets: config.crawl.targets,
    maxClassesPerRepo: config.crawl.maxClassesPerRepo,
    seed: config.crawl.seed,
    functionWindow: config.crawl.functionWindow,
    repoWindow: config.crawl.repoWindow,
    continueAsNewAfter: config.crawl.continueAsNewAfter,
    solvability: solvabilitySettingsFrom(config),
    timeouts: {
      ...timeouts,
      repoWorkflowMs: child.repo !== undefined ? child.repo * 1000 : repoWorkflowBudgetMs(budgets, loops, config.crawl),
      functionWorkflowMs: child.function !== undefined ? child.function * 1000 : functionWorkflowBudgetMs(budgets, loops),
      ...(child.crawl !== undefined ? { crawlWorkflowMs: child.crawl * 1000 } : {}),
    },
    ...(batched.length > 0 ? { llmBatchActivities: batched } : {}),
  };
}

/** The solvability stage's part of the workflows' settings. */
export function solvabilitySettingsFrom(config: Config): SolvabilitySettings {
  const s = config.loops.solvability;
  return { enabled: { ...s.enabled }, k: s.k, missingDocstring: s.generateDocstrings ? 'generate' : 'exclude', undetermined: s.removeUndetermined ? 'remove' : 'reject', rounds: s.rounds };
}

/** The task queues a run's workflows and activities go to. */
export function queuesFrom(config: Config): TaskQueues {
  return { ...config.temporal.taskQueues };
}

/**
 * Freezes the configuration's run settings and pipeline settings into the store; returns the
 * artifact key. `extra` adds (or replaces) parts of another kind of run (an evaluation's settings,
 * its own pipeline settings).
 */
export async function freezeRunSettings(store: Artifacts, config: Config, extra: Record<string, unknown> = {}): Promise<string> {
  return store.putJson({ ...runSettingsFrom(config), pipeline: pipelineSettingsFrom(config), ...extra });
}

/**
 * The pipeline settings a run froze; a run frozen without them gets them from `config` with the
 * run's settings applied. Settings frozen before every per-split setting took the `{ train, eval }`
 * shape, and before the mutants' sample travelled with them, are read in today's shape
 * (`upgradePipelineSettings`).
 */
export function frozenPipelineSettings(frozen: unknown, config: Config): PipelineSettings {
  const pipeline = (frozen as { pipeline?: PipelineSettings }).pipeline;
  if (!pipeline) return pipelineSettingsFrom(applyRunSettings(config, RunSettingsSchema.parse(frozen)));
  const old = pipeline as unknown as OldPipelineSettings;
  const needsSample = old.mutation !== undefined && (old.mutation.cap === undefined || old.mutation.seed === undefined);
  return upgradePipelineSettings(old, needsSample ? applyRunSettings(config, RunSettingsSchema.parse(frozen)).loops.mutation : null);
}

/** Pipeline settings as a run may have frozen them: a value per split under its own name, the mutants' sample in the configuration only. */
type OldPipelineSettings = Omit<PipelineSettings, 'coverageThreshold' | 'requireAstMatch' | 'mutation' | 'stability'> & {
  coverageThreshold: number | PipelineSettings['coverageThreshold'];
  evalCoverageThreshold?: number;
  requireAstMatch?: PipelineSettings['requireAstMatch'];
  evalRequiresAstMatch?: boolean;
  mutation?: { enabled: boolean; minScore: number | PerSplit<number>; evalMinScore?: number; rounds: number; cap?: number; seed?: number };
  stability?: { runs: number | PerSplit<number>; keepFlaky: boolean };
};

/**
 * Frozen pipeline settings in today's shape: `coverageThreshold`/`evalCoverageThreshold`,
 * `evalRequiresAstMatch`, `mutation.minScore`/`evalMinScore` become `{ train, eval }`, a single
 * number of stability runs applies to both splits, and a mutation stage without its sample takes
 * the run's configured one (`sample`, where the run's configuration is where it travelled).
 */
export function upgradePipelineSettings(old: OldPipelineSettings, sample: { cap: number; seed: number } | null): PipelineSettings {
  const { evalCoverageThreshold, evalRequiresAstMatch, ...rest } = old;
  const coverageThreshold = typeof old.coverageThreshold === 'number' ? { train: old.coverageThreshold, eval: evalCoverageThreshold ?? old.coverageThreshold } : old.coverageThreshold;
  const requireAstMatch = old.requireAstMatch ?? { train: false, eval: evalRequiresAstMatch ?? true };
  let mutation: PipelineSettings['mutation'];
  if (old.mutation) {
    const { evalMinScore, ...m } = old.mutation;
    const minScore = typeof m.minScore === 'number' ? { train: m.minScore, eval: evalMinScore ?? m.minScore } : m.minScore;
    mutation = { ...m, minScore, cap: m.cap ?? sample?.cap ?? DEFAULT_MUTATION_SETTINGS.cap, seed: m.seed ?? sample?.seed ?? DEFAULT_MUTATION_SETTINGS.seed };
  }
  const stability = old.stability && { ...old.stability, runs: typeof old.stability.runs === 'number' ? { train: old.stability.runs, eval: old.stability.runs } : old.stability.runs };
  return { ...rest, coverageThreshold, requireAstMatch, ...(mutation ? { mutation } : {}), ...(stability ? { stability } : {}) } as PipelineSettings;
}
