/**
 * Evaluating a model on a dataset, building training data from it, or augmenting its tests: one
 * EvalWorkflow per run, a child per function through a bounded sliding window that pulls the run's
 * item pages one at a time, continuing as new at a page boundary every `continueAsNewAfter`
 * functions; then the run is finalized (its summary computed from the results in the store). A
 * child that fails becomes a recorded result with its reason and the window goes on: the run
 * always finalizes.
 *
 * The child is the task's function workflow: EvalFunctionWorkflow (Pass@k, self-repair, ranking,
 * training data; workflows/eval-function.ts) or AugmentFunctionWorkflow (test augmentation;
 * workflows/augment-function.ts).
 */
import { ParentClosePolicy, continueAsNew, executeChild, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { PipelineSettings, RunRef, TaskQueues } from '../activities/contracts';
import type { EvalItem, EvalRunSummary } from '../activities/eval/contracts';
import type { EvalSettings } from '../activities/eval/settings';
import type { EvalIoActivities } from '../activities/eval-io-activities';
import { evalActivityProxies } from './activities';
import { augmentFunctionWorkflow } from './augment-function';
import { evalFunctionWorkflow } from './eval-function';
import { emptyEvalResult, type EvalFunctionInput } from './eval-steps';
import { failureText } from './failures';
import { boundedKeyword, boundedSummary, evalFunctionWorkflowId } from './ids';
import { RunIdKey } from './search-attributes';
import { streamingWindow } from './window';

export interface EvalWorkflowInput {
  run: RunRef;
  /** Artifact key of the run's item index (`EvalItemIndex`: pages of items, kept out of the history). */
  itemsKey: string;
  /** The run's evaluation settings, as frozen with it (activities read them from the store). */
  settings: EvalSettings;
  /** Timeouts and the like, as frozen with the run. */
  pipeline: PipelineSettings;
  queues: TaskQueues;
  /** Index of the next item page, carried across continue-as-new. */
  page?: number;
}

export async function evalWorkflow(input: EvalWorkflowInput): Promise<EvalRunSummary> {
  const { run, settings, pipeline, queues } = input;
  const { io } = evalActivityProxies(queues, pipeline);

  const runChild = async (item: EvalItem): Promise<void> => {
    const args: [EvalFunctionInput] = [{ run, item, settings, pipeline, queues }];
    // The task decides the child: an augmentation, or an evaluation (with ranking or training data).
    const child = settings.task === 'augment' ? augmentFunctionWorkflow : evalFunctionWorkflow;
    try {
      await executeChild(child, { ...itemChildOptions(input, item, `${item.repo} ${item.qualname}`), args });
    } catch (err) {
      // One failure never ends the run (docs/architecture.md, invariant 8): it is recorded with its reason.
      const failed = emptyEvalResult(item.functionId);
      failed.error = `the function's workflow failed: ${failureText(err)}`;
      // Not even the failure could be written: the run's summary counts the function as missing.
      await io.writeEvalFunction({ run, item, result: failed }).catch(() => undefined);
    }
  };

  const next = await itemsThroughWindow(input, io.loadEvalItems, runChild);
  if (next !== null) {
    // Pages are left: continue as new with a fresh history (the window has drained).
    await continueAsNew<typeof evalWorkflow>({ ...input, page: next });
  }
  return io.finalizeEval({ run, itemsKey: input.itemsKey });
}

/** The options of an item's child workflow (`idPart`: the id's second part, the task by default): its id, queue, the run's cancellation and time limit, and its summary in the UI. */
export function itemChildOptions(input: EvalWorkflowInput, item: EvalItem, summary: string, idPart: string = input.settings.task) {
  return {
    // Readable in the UI (repository and qualified name), bounded, and the same on every re-run.
    workflowId: evalFunctionWorkflowId(input.run.runId, idPart, item),
    taskQueue: input.queues.workflows,
    // Cancelling the run cancels its items; its time limit ends one that is stuck.
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    workflowExecutionTimeout: input.pipeline.timeouts.functionWorkflowMs,
    staticSummary: boundedSummary(summary),
  };
}

/**
 * The run's items through a bounded sliding window, one `runItem` each, the item pages pulled
 * one at a time. Returns the next page when it is time to continue as new (at a page boundary,
 * after `continueAsNewAfter` items or when Temporal suggests it), or null when every item ran.
 */
export async function itemsThroughWindow(
  input: Pick<EvalWorkflowInput, 'run' | 'itemsKey' | 'settings' | 'page'>,
  loadEvalItems: EvalIoActivities['loadEvalItems'],
  runItem: (item: EvalItem) => Promise<void>,
): Promise<number | null> {
  const { run, settings } = input;
  upsertSearchAttributes([{ key: RunIdKey, value: boundedKeyword(run.runId) }]);
  let page = input.page ?? 0;
  let pages = Infinity;
  let buffered: EvalItem[] = [];
  let started = 0;
  /** The next item, loading the next page when the buffer is empty; null at the end, or at a page boundary once it is time to continue as new (a page is never cut). */
  const pull = async (): Promise<EvalItem | null> => {
    while (buffered.length === 0) {
      if (page >= pages) return null;
      if (started > 0 && (started >= settings.continueAsNewAfter || workflowInfo().continueAsNewSuggested)) return null;
      const loaded = await loadEvalItems({ run, itemsKey: input.itemsKey, page });
      pages = loaded.pages;
      if (page >= pages) return null;
      page += 1;
      buffered = loaded.items;
    }
    started += 1;
    return buffered.shift()!;
  };
  await streamingWindow(pull, settings.functionWindow, runItem);
  return page < pages ? page : null;
}
