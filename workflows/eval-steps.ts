/**
 * What the evaluation's function workflows share (workflows/eval-function.ts,
 * workflows/augment-function.ts, and a crawl's solvability stage, workflows/solvability.ts): their
 * input, a function's tags in the Temporal UI, its result before any step has run, and the steps
 * a task's prompt, a candidate's run and a sample's self-repair rounds are made of (the class
 * evaluation's samples too: workflows/eval-class.ts).
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import type { PipelineSettings, RunRef, TaskQueues } from '../activities/contracts';
import type { CandidateRef, CandidateRun, EvalItem, FunctionEvalResult, PreparedPrompt, SampleRound, SampleTrace } from '../activities/eval/contracts';
import type { EvalSettings } from '../activities/eval/settings';
import type { Usage } from '../activities/store/usage';
import type { evalActivityProxies } from './activities';
import { activityFailureReason } from './failures';
import { boundedKeyword } from './ids';
import type { Priority } from './priorities';
import { FunctionKey, RepoKey, RunIdKey } from './search-attributes';

export interface EvalFunctionInput {
  run: RunRef;
  item: EvalItem;
  settings: EvalSettings;
  pipeline: PipelineSettings;
  queues: TaskQueues;
}

/** The function's run, repository and name as search attributes, so the UI can filter by them. */
export function tagEvalFunction(run: RunRef, item: EvalItem): void {
  upsertSearchAttributes([
    { key: RunIdKey, value: boundedKeyword(run.runId) },
    { key: RepoKey, value: boundedKeyword(item.repo) },
    { key: FunctionKey, value: boundedKeyword(item.qualname) },
  ]);
}

/** A function's result before any step: filled in as the steps end, written to the store at the end. */
export function emptyEvalResult(functionId: string): FunctionEvalResult {
  return { functionId, error: null, stepErrors: [], prompt: null, unusedDocstringUsage: null, samples: [], ranking: null, rankingUsage: null, training: null, augmentation: null };
}

type EvalProxies = ReturnType<typeof evalActivityProxies>;

/** Answers for a generated docstring before the task counts as having no usable prompt (the budgets count as many: activities/workflow-budgets.ts). */
export const DOCSTRING_ATTEMPTS = 3;

/**
 * A task's prompt: the dependency-only context with the target's body taken out, under the run's
 * docstring mode; a generated docstring is asked again after an unusable answer.
 */
export async function evalPrompt(
  llm: EvalProxies['llm'],
  priority: Priority,
  run: RunRef,
  item: EvalItem,
): Promise<{ ok: true; prompt: PreparedPrompt } | { ok: false; reason: string; spent: Usage | null }> {
  let spent: Usage | null = null;
  let reason = '';
  for (let attempt = 0; attempt < DOCSTRING_ATTEMPTS; attempt++) {
    const answer = await llm(priority).prepareEvalPrompt({ run, item, attempt, spent });
    if (answer.ok) return { ok: true, prompt: answer.prompt };
    ({ reason, usage: spent } = answer);
  }
  return { ok: false, reason: `no usable docstring after ${DOCSTRING_ATTEMPTS} answer(s): ${reason}`, spent };
}

/** The run of an answer that held no code: it fails as `no_code`, unrun. */
export function noCodeRun(ref: CandidateRef): CandidateRun {
  return { passed: false, kind: 'no_code', exceptionType: null, summary: ref.noCode ?? 'no code', resultKey: null, durationMs: 0 };
}

/** A candidate's run against the task's hidden tests; an answer without code fails as `no_code`, unrun. */
export function runHidden(sandbox: EvalProxies['sandbox'], priority: Priority, run: RunRef, item: EvalItem, ref: CandidateRef): Promise<CandidateRun> {
  return ref.candidateKey ? sandbox(priority).runCandidate({ run, item, candidateKey: ref.candidateKey }) : Promise.resolve(noCodeRun(ref));
}

/** What a sample is made of: its first answer, a run of an answer, and a repair of a failed run. */
export interface SampleSteps {
  answer(): Promise<CandidateRef>;
  run(ref: CandidateRef, round: number): Promise<CandidateRun>;
  repair(ref: CandidateRef, failed: CandidateRun, round: number): Promise<CandidateRef>;
}

/**
 * One sample with its self-repair rounds: the answer is run, and while it fails (not when the
 * harness failed it) and rounds are left, the failure goes back to the model and the repair runs.
 * A step that fails for good ends the sample with the rounds it has and the reason.
 */
export async function sampleWithRepairs(sample: number, repairRounds: number, steps: SampleSteps): Promise<SampleTrace> {
  const rounds: SampleRound[] = [];
  try {
    let ref = await steps.answer();
    for (let round = 0; ; round++) {
      const outcome = await steps.run(ref, round);
      rounds.push({ round, candidateKey: ref.candidateKey, run: outcome, usage: ref.usage });
      // A failure the harness caused is not the model's to repair: the sample stops there.
      if (outcome.passed || outcome.kind === 'harness' || round >= repairRounds) break;
      ref = await steps.repair(ref, outcome, round + 1);
    }
    return { sample, rounds, error: null };
  } catch (err) {
    return { sample, rounds, error: activityFailureReason(err) };
  }
}
