/**
 * Class evaluation (`eval.ts --classes`) as the function evaluation runs: one ClassEvalWorkflow
 * per run over the run's items (the class environments) through the same bounded window and
 * continue-as-new (workflows/eval-run.ts), a child per class:
 *   n samples, each: the class from its skeleton (LLM, `class_solve`) -> every test function on
 *     its own (sandbox) -> up to r self-repair rounds while a test fails: the failing tests back
 *     to the model (LLM, `class_repair`) -> run again (the function evaluation's sample loop,
 *     workflows/eval-steps.ts)
 *   -> the class's line (per-test results and similarity of every round, cost), into the store;
 * then the run's summary. With `groundTruth`, each class's one sample is the record's own class
 * (no LLM call): a check of the environments.
 */
import { continueAsNew, executeChild } from '@temporalio/workflow';
import type { CandidateRef, CandidateRun, SampleTrace } from '../activities/eval/contracts';
import { classEvalActivityProxies } from './activities';
import { itemsThroughWindow, itemChildOptions, type EvalWorkflowInput } from './eval-run';
import { noCodeRun, sampleWithRepairs, tagEvalFunction, type EvalFunctionInput } from './eval-steps';
import { failureText } from './failures';
import { EVAL_PRIORITY as PRIORITY } from './priorities';
import { slidingWindow } from './window';

export interface ClassEvalWorkflowInput extends EvalWorkflowInput {
  /** Answer with each record's own class instead of asking a model. */
  groundTruth: boolean;
}

export type EvalClassInput = EvalFunctionInput & { groundTruth: boolean };

/** What the ground truth's answer cost: nothing. */
const NO_USAGE = { calls: 0, cachedCalls: 0, promptTokens: 0, cachedPromptTokens: 0, completionTokens: 0, costUsd: 0, latencyMs: 0 };

/** The id part of a class's child workflow (`<run>/class-eval/<repo>/<class>/<hash>`). */
const CLASS_EVAL_ID = 'class-eval';

export async function classEvalWorkflow(input: ClassEvalWorkflowInput): Promise<{ classes: number; errors: number; headline: Record<string, number | null> }> {
  const { run, settings, pipeline, queues, groundTruth } = input;
  const { io } = classEvalActivityProxies(queues, pipeline);

  const next = await itemsThroughWindow(input, io.loadEvalItems, async (item) => {
    const args: [EvalClassInput] = [{ run, item, settings, pipeline, queues, groundTruth }];
    try {
      await executeChild(evalClassWorkflow, { ...itemChildOptions(input, item, `${item.repo} class ${item.qualname}`, CLASS_EVAL_ID), args });
    } catch (err) {
      // One class's failure never ends the run: it is recorded with its reason.
      await io.writeClassEval({ run, item, samples: [], error: `the class's workflow failed: ${failureText(err)}` }).catch(() => undefined);
    }
  });
  if (next !== null) await continueAsNew<typeof classEvalWorkflow>({ ...input, page: next });
  return io.finalizeClassEval({ run, groundTruth });
}

/** One class: its samples with their repair rounds, then its line into the store. */
export async function evalClassWorkflow(input: EvalClassInput): Promise<{ samples: number; passed: number }> {
  const { run, item, settings, groundTruth } = input;
  const { io, llm, sandbox } = classEvalActivityProxies(input.queues, input.pipeline);
  tagEvalFunction(run, item);
  // An answer without a class is not run (it fails as `no_code`); a repair round runs at the repairs' priority.
  const runClass = (ref: CandidateRef, round: number): Promise<CandidateRun> =>
    ref.candidateKey ? sandbox(round === 0 ? PRIORITY.sample : PRIORITY.repair).runClassCandidate({ run, item, candidateKey: ref.candidateKey }) : Promise.resolve(noCodeRun(ref));
  const samples: SampleTrace[] = groundTruth
    ? [
        // The record's own class: no answer asked for, no repair.
        await sampleWithRepairs(0, 0, {
          answer: async () => ({ candidateKey: null, noCode: null, exchangeKey: '', usage: NO_USAGE }),
          run: () => sandbox(PRIORITY.sample).runClassCandidate({ run, item, candidateKey: null }),
          repair: () => Promise.reject(new Error('the ground truth is not repaired')),
        }),
      ]
    : await slidingWindow(
        Array.from({ length: settings.n }, (_, i) => i),
        settings.sampleWindow,
        (sample) =>
          sampleWithRepairs(sample, settings.repairRounds, {
            answer: () => llm(PRIORITY.sample).sampleClass({ run, item, sample }),
            run: runClass,
            repair: (ref, failed, round) => llm(PRIORITY.repair).repairClass({ run, item, candidateKey: ref.candidateKey, resultKey: failed.resultKey, failure: failed.summary, round, sample }),
          }),
      );
  return io.writeClassEval({ run, item, samples, error: null });
}
