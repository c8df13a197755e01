/**
 * What the evaluation's function workflows share (workflows/eval-function.ts,
 * workflows/augment-function.ts): their input, a function's tags in the Temporal UI, and its
 * result before any step has run.
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import type { PipelineSettings, RunRef, TaskQueues } from '../activities/contracts';
import type { EvalItem, FunctionEvalResult } from '../activities/eval/contracts';
import type { EvalSettings } from '../activities/eval/settings';
import { boundedKeyword } from './ids';
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
