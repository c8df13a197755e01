/**
 * What the pipeline's stages share while one target moves through them (workflows/function.ts
 * and the stage files beside it): the target, its settings and thresholds, the activity
 * proxies, the record being filled in, the script in use and the one way to adopt a better one,
 * and how a stage shows where it is. Deterministic: no I/O, types only from activities.
 */
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type {
  ExecutionSummary,
  FunctionRef,
  FunctionStage,
  LlmStepResult,
  MutationScore,
  PipelineSettings,
  PreparedFunction,
  PreviousAnswer,
  RecordThresholds,
  RunRef,
  SolvabilityResult,
  StabilityVerdict,
  TaskQueues,
} from '../activities/contracts';
import { activityProxies } from './activities';
import type { Priority } from './priorities';
import { StageKey } from './search-attributes';
import { targetDetails } from './target-kinds';

export interface FunctionWorkflowInput {
  run: RunRef;
  fn: FunctionRef;
  settings: PipelineSettings;
  queues: TaskQueues;
}

/** Branch coverage when the function has branches, else line coverage (no 100% by decree). */
export function coverageOf(exec: ExecutionSummary): number {
  const c = exec.coverage;
  if (!c) return 0;
  return c.hasBranches && c.branchCoverage !== null ? c.branchCoverage : c.lineCoverage;
}

/** What the function must reach: the evaluation split's thresholds, or the training split's. */
export function thresholdsFor(fn: FunctionRef, settings: PipelineSettings): RecordThresholds {
  const m = settings.mutation;
  return { coverage: settings.coverageThreshold[fn.split], astCheckRequired: settings.requireAstMatch[fn.split], mutationScore: m?.enabled ? m.minScore[fn.split] : null };
}

/** A mutation score below the minimum; a script with no mutant to kill has nothing to fall short of. */
export function belowMinScore(m: MutationScore, minScore: number): boolean {
  return m.status === 'scored' && m.score! < minScore;
}

/** The script in use: its artifact, the install lines that came with it, its last run with the ground truth. */
export interface ScriptInUse {
  key: string;
  installs: string[];
  exec: ExecutionSummary | null;
}

/** A stage's end short of acceptance: where the target stopped, and why. */
export interface Rejection {
  stage: FunctionStage;
  reason: string;
}

/** What the record needs, filled in as the target moves through the stages. */
export interface PipelineState {
  tokens: number;
  debugRounds: number;
  coverageRounds: number;
  mutationRounds: number;
  prepared: PreparedFunction | null;
  script: ScriptInUse | null;
  astEquivalent: boolean | null;
  functionality: string | null;
  testCorrectness: string | null;
  solvability: SolvabilityResult | null;
  promptVersions: Record<string, string>;
  mutation: MutationScore | null;
  stability: StabilityVerdict | null;
}

/** An answer's cost and prompt version counted; a code answer or a verdict alike. */
type Answer = { ok: true; tokens: number; promptVersion: string } | { ok: false; tokens: number };

/** What an unusable answer was, to tell the model on the next attempt. */
function previousOf(result: LlmStepResult): PreviousAnswer | undefined {
  return !result.ok && result.exchangeKey ? { exchangeKey: result.exchangeKey, failure: result.failure, detail: result.detail } : undefined;
}

export type Pipeline = ReturnType<typeof pipelineOf>;

export function pipelineOf(input: FunctionWorkflowInput) {
  const { run, fn, settings } = input;
  const state: PipelineState = {
    tokens: 0, debugRounds: 0, coverageRounds: 0, mutationRounds: 0, prepared: null, script: null, astEquivalent: null, functionality: null,
    testCorrectness: null, solvability: null, promptVersions: {}, mutation: null, stability: null,
  };
  /** The stage reached: where a failed activity ends the target. */
  let stage: FunctionStage = 'prepare';
  let shownStage: FunctionStage | null = null;

  const p = {
    run, fn, settings, queues: input.queues,
    thresholds: thresholdsFor(fn, settings),
    ...activityProxies(input.queues, settings),
    state,
    get stage(): FunctionStage {
      return stage;
    },
    get prepared(): PreparedFunction {
      return state.prepared!;
    },
    get script(): ScriptInUse {
      return state.script!;
    },
    get exec(): ExecutionSummary {
      return state.script!.exec!;
    },

    /**
     * What the Temporal UI shows for a running target (where it is, how the last step went), and
     * its stage as a search attribute, so progress views can count running targets by stage.
     */
    progress(at: FunctionStage, detail: string): void {
      setCurrentDetails(targetDetails(fn, at, detail));
      if (at !== shownStage) {
        shownStage = at;
        upsertSearchAttributes([{ key: StageKey, value: at }]);
      }
    },

    /** Enters a stage: a failed activity from here on ends the target at it. */
    enter(at: FunctionStage, detail: string): void {
      stage = at;
      p.progress(at, detail);
    },

    /** The one way to take up a script: its key, installs and run become the ones in use (and on the record). */
    adopt(script: ScriptInUse): void {
      state.script = script;
    },

    /** Counts an answer's tokens and, when usable, its step's prompt version; says what was wrong with an unusable code answer. */
    answered(result: Answer | LlmStepResult, step: string): PreviousAnswer | undefined {
      state.tokens += result.tokens;
      if (result.ok) state.promptVersions[step] = result.promptVersion;
      return 'exchangeKey' in result ? previousOf(result as LlmStepResult) : undefined;
    },

    /**
     * Asks again after an unusable answer (parse failure, failed sanity check), a bounded number of
     * times; each new attempt shows the model its previous answer and what was wrong with it.
     */
    async regenerating(step: FunctionStage, ask: (attempt: number, previous: PreviousAnswer | undefined) => Promise<LlmStepResult>): Promise<LlmStepResult> {
      let last: LlmStepResult | null = null;
      for (let attempt = 0; attempt <= settings.regenerateAttempts; attempt++) {
        last = await ask(attempt, last ? previousOf(last) : undefined);
        p.answered(last, step);
        if (last.ok) return last;
        p.progress(step, `attempt ${attempt + 1} unusable: ${last.failure}`);
      }
      return last!;
    },

    /** A script run with the ground truth copied in as the new implementation, its coverage measured. */
    execute(priority: Priority, script: { key: string; installs: string[] }): Promise<ExecutionSummary> {
      return p.sandbox(priority).executeScript({ run, fn, prepared: p.prepared, scriptKey: script.key, coverage: true, installs: script.installs });
    },
  };
  return p;
}

/** A usable code answer as a script to try (not yet run). */
export function scriptOf(answer: Extract<LlmStepResult, { ok: true }>): { key: string; installs: string[] } {
  return { key: answer.scriptKey, installs: answer.installs };
}
