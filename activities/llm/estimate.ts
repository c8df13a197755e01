/**
 * What a crawl will cost before it starts: the expected LLM calls, tokens and cost per step, from
 * the targets the analysis selects (their context sizes), the configuration (rounds, samples,
 * stages on or off, models and prices) and per-step averages: how many calls a target makes at
 * each step, and how large its prompt and answer are beside the target's own code.
 *
 * The averages are this project's measurements (`MEASURED_STEP_AVERAGES`); for a resumed run they
 * are replaced by the run's own (`averagesFromExchanges`). Token counts are rough (four
 * characters a token), as endpoints without usage are counted; the prompt's fixed part is the
 * step's template rendered with empty inputs, so a change to a prompt shows in the estimate.
 */
import type { Config } from '../../temporal.config';
import type { TargetKind } from '../contracts';
import { estimateCostUsd } from './cost';
import { modelForStep } from './gateway';
import { loadPromptTemplate, PROMPT_KINDS, renderPrompt, type PromptKind } from './prompts';
import { estimateMessagesTokens } from './tokens';
import type { LlmStep } from './types';

/** One step's averages: calls per target that enters the pipeline, and the sizes around the target's code. */
export interface StepAverages {
  /** Calls per target (regenerations included); 0 when the step is rarely reached. */
  callsPerTarget: number;
  /** Prompt tokens per call beyond the template's fixed part, per token of the target's context. */
  promptPerContextToken: number;
  /** Completion tokens per call: a fixed part plus so many per token of the target's context. */
  completionBase: number;
  completionPerContextToken: number;
}

/**
 * Defaults measured on this project's runs: the offline demo (its functions as training and as
 * evaluation data, scripted answers: 1.25 tests calls a function, 0.9 test checks, a debug and a
 * coverage round in a quarter of them, half the evaluation functions reaching solvability) and a
 * run with real answers on 28 functions of RepoST's evaluation set (answers the size of the whole
 * script: about 1.5 times the context, 2 times with its tests). `solve` is per sample (times
 * `loops.solvability.k`). Steps a crawl never calls (evaluation) are 0.
 */
export const MEASURED_STEP_AVERAGES: Readonly<Record<LlmStep, StepAverages>> = {
  sandbox: { callsPerTarget: 1.05, promptPerContextToken: 1, completionBase: 60, completionPerContextToken: 1.5 },
  aggregate: { callsPerTarget: 1.05, promptPerContextToken: 1, completionBase: 60, completionPerContextToken: 1.5 },
  tests: { callsPerTarget: 1.25, promptPerContextToken: 1.5, completionBase: 120, completionPerContextToken: 1.5 },
  debug: { callsPerTarget: 0.25, promptPerContextToken: 2, completionBase: 80, completionPerContextToken: 2 },
  coverage: { callsPerTarget: 0.25, promptPerContextToken: 2, completionBase: 100, completionPerContextToken: 2 },
  mutation: { callsPerTarget: 0.4, promptPerContextToken: 2, completionBase: 100, completionPerContextToken: 2 },
  check_functionality: { callsPerTarget: 0.15, promptPerContextToken: 0.5, completionBase: 30, completionPerContextToken: 0 },
  check_tests: { callsPerTarget: 0.9, promptPerContextToken: 2, completionBase: 30, completionPerContextToken: 0 },
  docstring: { callsPerTarget: 0.15, promptPerContextToken: 0.5, completionBase: 40, completionPerContextToken: 0 },
  solve: { callsPerTarget: 0.6, promptPerContextToken: 1, completionBase: 20, completionPerContextToken: 0.4 },
  check_assertion: { callsPerTarget: 0.3, promptPerContextToken: 2, completionBase: 40, completionPerContextToken: 0 },
  repair: { callsPerTarget: 0, promptPerContextToken: 1, completionBase: 20, completionPerContextToken: 0.4 },
  candidate_tests: { callsPerTarget: 0, promptPerContextToken: 1, completionBase: 100, completionPerContextToken: 0 },
  test_inputs: { callsPerTarget: 0, promptPerContextToken: 1.5, completionBase: 100, completionPerContextToken: 0 },
  class_sandbox: { callsPerTarget: 1.1, promptPerContextToken: 1, completionBase: 60, completionPerContextToken: 1.3 },
  class_tests: { callsPerTarget: 1.2, promptPerContextToken: 1.3, completionBase: 250, completionPerContextToken: 2 },
  class_debug: { callsPerTarget: 0.3, promptPerContextToken: 2, completionBase: 80, completionPerContextToken: 2 },
  class_coverage: { callsPerTarget: 0.3, promptPerContextToken: 2, completionBase: 100, completionPerContextToken: 2 },
  class_check_functionality: { callsPerTarget: 0.4, promptPerContextToken: 0.8, completionBase: 30, completionPerContextToken: 0 },
  class_check_tests: { callsPerTarget: 1.1, promptPerContextToken: 2, completionBase: 30, completionPerContextToken: 0 },
  class_solve: { callsPerTarget: 0, promptPerContextToken: 1, completionBase: 40, completionPerContextToken: 0.6 },
  class_repair: { callsPerTarget: 0, promptPerContextToken: 1.2, completionBase: 40, completionPerContextToken: 0.6 },
};

/**
 * How a target's kind asks one LLM step: for every target (`each`), for a target using only its
 * own file's code or also other files' (`ownFile`, `crossFile`: RepoST's two sandbox prompts),
 * once a round of a loop (debug, coverage, mutation), or in the evaluation split's solvability
 * stage (per sample, the docstring, per assertion round).
 */
export type StepUse = 'each' | 'ownFile' | 'crossFile' | 'debugRounds' | 'coverageRounds' | 'mutationRounds' | 'solvabilitySamples' | 'solvabilityDocstring' | 'solvabilityRounds';

/** The steps a target kind asks during a crawl, with how; a step it never asks is absent. */
export type KindSteps = Readonly<Partial<Record<LlmStep, StepUse>>>;

/** A selected target as the estimate sees it. */
export interface EstimateTarget {
  kind: TargetKind;
  /** The LLM steps its kind asks and how often (the kind module's `llmSteps`). */
  steps: KindSteps;
  /** It uses code of other files (the `aggregate` prompt), or only its own file's (`sandbox`). */
  crossFile: boolean;
  /** Identifies its content (kind and context): a target with the same content as an earlier one has its calls answered from the answer cache. */
  contentKey?: string;
  split: 'train' | 'eval';
  /** Rough tokens of the context the sandbox step is given. */
  contextTokens: number;
}

export interface StepEstimate {
  step: LlmStep;
  model: string;
  calls: number;
  /** Of the calls, those the answer cache would answer (a target whose content an earlier one has): no tokens, no cost. */
  cachedCalls: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

export interface RunEstimate {
  targets: { functions: number; classes: number; eval: number };
  steps: StepEstimate[];
  total: { calls: number; cachedCalls: number; promptTokens: number; completionTokens: number; costUsd: number };
  /** Models the price table does not list (their cost counts 0: unknown, not free). */
  unpriced: string[];
  /** Where the averages come from. */
  averages: 'measured defaults' | 'this run so far';
}

type EstimateConfig = Pick<Config, 'llm' | 'loops'>;

const SOLVABILITY_STEPS = new Set<LlmStep>(['solve', 'docstring', 'check_assertion']);

/**
 * The share of prompt tokens an endpoint's prompt cache is expected to serve (priced at
 * `cachedInputPerMTok`): the prompts share their rules and the function's script as a prefix.
 * Measured 60% on the demo with a cache from 64 tokens on; an endpoint that caches only prefixes
 * of 1024 tokens and more serves less of small prompts, so the default assumes half of that.
 */
export const EXPECTED_PROMPT_CACHE_SHARE = 0.3;

/** The template's fixed part: the step's prompt rendered with empty inputs (rough tokens). */
function fixedPromptTokens(step: LlmStep): number {
  if (!(PROMPT_KINDS as readonly string[]).includes(step)) return 0;
  const empty: Record<string, string | number> = { coverage: 0, score: 0 };
  for (const v of loadPromptTemplate(step as PromptKind).variables) empty[v] = '';
  empty.functionName = 'f';
  return estimateMessagesTokens(renderPrompt(step as PromptKind, empty as never).messages);
}

/** How many calls per target a step makes under the configuration (0 when it is off), given its average and how the target's kind asks it. */
function callsPerTarget(step: LlmStep, t: EstimateTarget, config: EstimateConfig, avg: StepAverages): number {
  const use = t.steps[step];
  if (use === undefined) return 0;
  const loops = config.loops;
  const solvability = loops.solvability.enabled[t.split];
  const regenerate = 1 + loops.regenerateAttempts / 2;
  const scaled = (n: number) => Math.min(avg.callsPerTarget, n * regenerate);
  switch (use) {
    case 'each':
      return avg.callsPerTarget;
    case 'ownFile':
      return t.crossFile ? 0 : avg.callsPerTarget;
    case 'crossFile':
      return t.crossFile ? avg.callsPerTarget : 0;
    case 'debugRounds':
      return scaled(loops.debugRounds);
    case 'coverageRounds':
      return scaled(loops.coverageRounds);
    case 'mutationRounds':
      return loops.mutation.enabled ? scaled(loops.mutation.rounds) : 0;
    case 'solvabilitySamples':
      return solvability ? loops.solvability.k * avg.callsPerTarget : 0;
    case 'solvabilityDocstring':
      return solvability && loops.solvability.generateDocstrings ? avg.callsPerTarget : 0;
    case 'solvabilityRounds':
      return solvability ? scaled(loops.solvability.rounds) : 0;
  }
}

/** The targets of one kind. */
function countOf(targets: readonly EstimateTarget[], kind: TargetKind): number {
  return targets.reduce((n, t) => n + Number(t.kind === kind), 0);
}

function modelOf(step: LlmStep, config: EstimateConfig): string {
  if (step === 'solve' && config.loops.solvability.model) return config.loops.solvability.model;
  return modelForStep(config, step);
}

/** The expected calls, tokens and cost of crawling `targets` under `config`. */
export function estimateRun(targets: readonly EstimateTarget[], config: EstimateConfig, own?: Partial<Record<LlmStep, StepAverages>>): RunEstimate {
  const steps: StepEstimate[] = [];
  const priced = new Set<string>();
  const unpriced = new Set<string>();
  // A target whose content an earlier one has asks the same questions: the answer cache answers
  // them (sampled solve answers are cached only when the configuration caches above temperature 0).
  const seen = new Set<string>();
  const repeated = targets.map((t) => {
    if (!config.llm.cache.enabled || t.contentKey === undefined) return false;
    if (seen.has(t.contentKey)) return true;
    seen.add(t.contentKey);
    return false;
  });
  for (const step of Object.keys(MEASURED_STEP_AVERAGES) as LlmStep[]) {
    const avg = own?.[step] ?? MEASURED_STEP_AVERAGES[step];
    const fixed = fixedPromptTokens(step);
    let calls = 0;
    let cachedCalls = 0;
    let promptTokens = 0;
    let completionTokens = 0;
    for (const [i, t] of targets.entries()) {
      const n = callsPerTarget(step, t, config, avg);
      if (n <= 0) continue;
      calls += n;
      // The solvability steps are the evaluation copy's own; the earlier copy never asked them.
      if (repeated[i] && !SOLVABILITY_STEPS.has(step)) {
        cachedCalls += n;
        continue;
      }
      promptTokens += n * (fixed + avg.promptPerContextToken * t.contextTokens);
      completionTokens += n * (avg.completionBase + avg.completionPerContextToken * t.contextTokens);
    }
    if (calls === 0) continue;
    const model = modelOf(step, config);
    (config.llm.prices[model] ? priced : unpriced).add(model);
    const rounded = { calls, cachedCalls, promptTokens: Math.round(promptTokens), completionTokens: Math.round(completionTokens) };
    const cachedPrompt = Math.round(rounded.promptTokens * EXPECTED_PROMPT_CACHE_SHARE);
    steps.push({ step, model, ...rounded, costUsd: estimateCostUsd(config.llm.prices, model, rounded.promptTokens, rounded.completionTokens, 'live', cachedPrompt) });
  }
  const total = steps.reduce((s, x) => ({ calls: s.calls + x.calls, cachedCalls: s.cachedCalls + x.cachedCalls, promptTokens: s.promptTokens + x.promptTokens, completionTokens: s.completionTokens + x.completionTokens, costUsd: s.costUsd + x.costUsd }), {
    calls: 0,
    cachedCalls: 0,
    promptTokens: 0,
    completionTokens: 0,
    costUsd: 0,
  });
  return {
    targets: { functions: countOf(targets, 'function'), classes: countOf(targets, 'class'), eval: targets.filter((t) => t.split === 'eval').length },
    steps,
    total,
    unpriced: [...unpriced],
    averages: own && Object.keys(own).length > 0 ? 'this run so far' : 'measured defaults',
  };
}

/** One recorded call, as the run's exchange index holds it. */
export interface RecordedCall {
  step: string;
  functionId: string;
  promptTokens: number;
  completionTokens: number;
}

/**
 * A run's own averages from its calls so far: per step, its calls over the targets the run has
 * started (the distinct targets that made a call), and its sizes beside the selected targets'
 * mean context (`meanContextTokens`). Steps the run has not called keep the defaults.
 */
export function averagesFromExchanges(calls: Iterable<RecordedCall>, meanContextTokens: number): Partial<Record<LlmStep, StepAverages>> {
  const by = new Map<string, { calls: number; prompt: number; completion: number; context: number; sized: number }>();
  const started = new Set<string>();
  for (const c of calls) {
    started.add(c.functionId);
    const s = by.get(c.step) ?? { calls: 0, prompt: 0, completion: 0, context: 0, sized: 0 };
    s.calls += 1;
    const ctx = meanContextTokens;
    if (ctx > 0) {
      s.prompt += c.promptTokens;
      s.completion += c.completionTokens;
      s.context += ctx;
      s.sized += 1;
    }
    by.set(c.step, s);
  }
  const out: Partial<Record<LlmStep, StepAverages>> = {};
  const targetsStarted = started.size;
  if (targetsStarted === 0) return out;
  for (const [step, s] of by) {
    if (!(step in MEASURED_STEP_AVERAGES)) continue;
    const base = MEASURED_STEP_AVERAGES[step as LlmStep];
    const fixed = fixedPromptTokens(step as LlmStep);
    out[step as LlmStep] = {
      callsPerTarget: s.calls / targetsStarted,
      // Prompt beyond the template's fixed part, and the answer, per token of context.
      promptPerContextToken: s.sized > 0 ? Math.max(0, s.prompt - fixed * s.sized) / s.context : base.promptPerContextToken,
      completionBase: s.sized > 0 ? 0 : base.completionBase,
      completionPerContextToken: s.sized > 0 ? s.completion / s.context : base.completionPerContextToken,
    };
  }
  return out;
}

/** The estimate as a table for a terminal. */
export function formatEstimate(e: RunEstimate, formatCost: (usd: number) => string): string {
  const lines: string[] = [];
  lines.push(`${e.targets.functions} function(s) and ${e.targets.classes} class(es) selected (${e.targets.eval} of the evaluation split); averages: ${e.averages}`);
  const cost = (usd: number, model: string) => (e.unpriced.includes(model) ? 'price unknown' : formatCost(usd));
  const rows = e.steps.map((s) => [s.step, s.model, s.calls.toFixed(1), s.cachedCalls.toFixed(1), String(s.promptTokens), String(s.completionTokens), cost(s.costUsd, s.model)]);
  const header = ['step', 'model', 'calls', 'from cache', 'prompt tokens', 'completion tokens', 'cost'];
  const all = [header, ...rows, ['total', '', e.total.calls.toFixed(1), e.total.cachedCalls.toFixed(1), String(e.total.promptTokens), String(e.total.completionTokens), formatCost(e.total.costUsd)]];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  for (const r of all) lines.push(r.map((c, i) => (i >= 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd());
  return lines.join('\n');
}
