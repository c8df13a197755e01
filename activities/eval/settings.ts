/**
 * The settings of one evaluation or training-data run, validated once when the run starts and
 * frozen with the run's settings (`activities/run-settings.ts`) under the key `eval`, so every
 * worker applies the run's settings, never its own; the workflow gets a copy in its input.
 */
import { z } from 'zod';
import type { Config } from '../../temporal.config';
import type { PipelineSettings } from '../contracts';
import { pipelineSettingsFrom } from '../run-settings';
import { sandboxActivityBudgetMs } from '../sandbox/budget';
import { DOCSTRING_ATTEMPTS, stepsBudgetMs, type Budgets } from '../workflow-budgets';

/** Where the prompt's description of the target comes from (RepoST's Table 8 settings). */
export const DOCSTRING_MODES = ['original', 'none', 'generated'] as const;
export type DocstringMode = (typeof DOCSTRING_MODES)[number];

/** How candidates are ranked without the ground truth; `none` skips ranking. */
export const SELECT_METHODS = ['none', 'genx', 'codet', 'random'] as const;
export type SelectMethod = (typeof SELECT_METHODS)[number];

/** `eval`: Pass@k and self-repair. `rft`: rejection-sampling training data. `augment`: extra equivalence inputs. */
export const EVAL_TASKS = ['eval', 'rft', 'augment'] as const;
export type EvalTask = (typeof EVAL_TASKS)[number];

/** Upper bounds that keep one function's payloads and history small (docs/architecture.md, invariants 1 and 7). */
export const EVAL_LIMITS = { maxSamples: 100, maxRepairRounds: 5, maxTestSamples: 20, maxTestsPerFunction: 200 } as const;

export const EvalSettingsSchema = z
  .object({
    task: z.enum(EVAL_TASKS).default('eval'),
    /** The model under evaluation (or the one sampling training data); unset = the `solve` step's model. */
    model: z.string().min(1).optional(),
    /** Samples per function. */
    n: z.number().int().min(1).max(EVAL_LIMITS.maxSamples).default(1),
    temperature: z.number().min(0).max(2).default(0),
    /** k values of Pass@k and n@k; those above n are left out. */
    ks: z.array(z.number().int().positive()).min(1).default([1, 5, 10]),
    /** Self-repair rounds after a failing sample (RepoST's Table 7); in RFT, repaired samples that pass are kept too. */
    repairRounds: z.number().int().min(0).max(EVAL_LIMITS.maxRepairRounds).default(0),
    docstring: z.enum(DOCSTRING_MODES).default('original'),
    /**
     * With `original`, a target without a docstring: `keep` it without one, or `generate` one as
     * `generated` would (a description the record carries is shown either way).
     */
    missingDocstring: z.enum(['keep', 'generate']).default('keep'),
    /** The model that writes docstrings in `generated` mode; unset = the `docstring` step's model. */
    docstringModel: z.string().min(1).optional(),
    select: z.enum(SELECT_METHODS).default('none'),
    /** Test-generation answers per function for dual ranking (each answer holds several assertions). */
    testSamples: z.number().int().min(1).max(EVAL_LIMITS.maxTestSamples).default(2),
    /** Functions evaluated at once (sliding window of child workflows). */
    functionWindow: z.number().int().positive().default(8),
    /** Samples of one function in flight at once. */
    sampleWindow: z.number().int().positive().default(4),
    /** Wall-clock limit of one sandbox run of a candidate. */
    timeoutSec: z.number().int().positive().default(60),
    /** Limit per candidate test inside a matrix run. */
    testTimeoutSec: z.number().int().positive().default(10),
    /** Continue-as-new after this many functions, to keep the run's history small. */
    continueAsNewAfter: z.number().int().positive().default(200),
    /** Augment: runs of the ground truth that must agree before an input is kept. */
    determinismRuns: z.number().int().min(2).max(5).default(2),
    /** GenX iteration: stop when no score moves more than this, or after `genxMaxIterations`. */
    genxTolerance: z.number().positive().default(1e-9),
    genxMaxIterations: z.number().int().positive().default(1000),
  })
  .strict();

export type EvalSettings = z.infer<typeof EvalSettingsSchema>;

/** Validates settings from flags or a file; throws a readable error naming the bad keys. */
/** Settings a run cannot start with (a flag out of range, an unknown task). */
export class EvalSettingsError extends Error {
  override name = 'EvalSettingsError';
}

export function parseEvalSettings(input: unknown): EvalSettings {
  const parsed = EvalSettingsSchema.safeParse(input);
  if (!parsed.success) {
    throw new EvalSettingsError(`invalid eval settings: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

/** The k values that make sense for n samples, sorted and unique. */
export function effectiveKs(settings: Pick<EvalSettings, 'ks' | 'n'>): number[] {
  return [...new Set(settings.ks.filter((k) => k <= settings.n))].sort((a, b) => a - b);
}

/** Where an evaluation run's own settings sit in the frozen run settings artifact. */
export const FrozenEvalSettingsSchema = z.object({ eval: EvalSettingsSchema });

/** The evaluation settings frozen with a run; a run without them is not an evaluation run. */
export function frozenEvalSettings(frozen: unknown, runId: string): EvalSettings {
  const parsed = FrozenEvalSettingsSchema.safeParse(frozen);
  if (!parsed.success) throw new Error(`run ${runId} has no evaluation settings: it is not an evaluation run`);
  return parsed.data.eval;
}

/**
 * The evaluation settings of a crawl run: those of its solvability stage (`loops.solvability`),
 * under which the evaluation's activities write and run a record's implementations from its
 * prompt, the original docstring or, for a function without one, a generated one.
 */
export function solvabilityEvalSettings(config: Config): EvalSettings {
  const s = config.loops.solvability;
  return parseEvalSettings({
    task: 'eval',
    ...(s.model ? { model: s.model } : {}),
    n: s.k,
    temperature: s.temperature,
    ks: [1],
    docstring: 'original',
    missingDocstring: s.generateDocstrings ? 'generate' : 'keep',
    timeoutSec: config.sandbox.timeoutSec,
  });
}

/** A run's evaluation settings: frozen with an evaluation run, or a crawl's solvability stage's. */
export function evalSettingsOfRun(frozen: unknown, runId: string, config: Config): EvalSettings {
  return FrozenEvalSettingsSchema.safeParse(frozen).success ? frozenEvalSettings(frozen, runId) : solvabilityEvalSettings(config);
}

/**
 * The workflows' settings of an evaluation run: the pipeline's, with a sandbox budget that also
 * covers the run's own limits (a candidate's run, a matrix run of the most tests a function may have).
 */
export function evalPipelineSettings(config: Config, settings: EvalSettings): PipelineSettings {
  const base = pipelineSettingsFrom(config);
  const longestRunSec = Math.max(config.sandbox.timeoutSec, settings.timeoutSec, settings.testTimeoutSec * (EVAL_LIMITS.maxTestsPerFunction + 3));
  const timeouts = { ...base.timeouts, sandboxMs: sandboxActivityBudgetMs({ ...config.sandbox, timeoutSec: longestRunSec }) };
  const child = config.temporal.childTimeoutSec.evalFunction;
  // The run's function workflows are evaluation functions: their own limit, from their own steps.
  return { ...base, timeouts: { ...timeouts, functionWorkflowMs: child !== undefined ? child * 1000 : evalFunctionBudgetMs(timeouts, settings) } };
}

/**
 * One function of an evaluation run: the prompt (a docstring asked up to three times), the samples
 * in waves of the sample window (each an answer and a run, and per repair round another of each),
 * the ranking (candidate tests, a matrix run per wave and one for the ground truth), training
 * targets, and the result; or, when augmenting, the inputs, the ground truth's runs and the check.
 */
export function evalFunctionBudgetMs(budgets: Budgets, settings: Pick<EvalSettings, 'task' | 'n' | 'sampleWindow' | 'repairRounds' | 'select' | 'testSamples' | 'determinismRuns'>): number {
  if (settings.task === 'augment') return stepsBudgetMs(budgets, { io: 1, llm: 1, sandbox: settings.determinismRuns + 1 });
  const waves = Math.ceil(settings.n / settings.sampleWindow);
  const ranking = settings.task === 'eval' && settings.select !== 'none';
  return stepsBudgetMs(budgets, {
    io: 1 + (ranking ? 2 : 0),
    llm: DOCSTRING_ATTEMPTS + waves * (1 + settings.repairRounds) + (ranking ? Math.ceil(settings.testSamples / settings.sampleWindow) : 0),
    sandbox: waves * (1 + settings.repairRounds) + (ranking ? waves + 1 : 0) + (settings.task === 'rft' ? 1 : 0),
  });
}
