/**
 * One repository: pin a snapshot, pick the candidate functions, and run a FunctionWorkflow child
 * per function through a bounded sliding window.
 */
import { ParentClosePolicy, executeChild, upsertSearchAttributes } from '@temporalio/workflow';
import type { PipelineSettings, RepoOutcome, RepoSource, RunRef, TaskQueues } from '../activities/contracts';
import { activityProxies } from './activities';
import { functionWorkflow } from './function';
import { RepoKey, RunIdKey } from './search-attributes';
import { slidingWindow } from './window';

export interface RepoWorkflowInput {
  run: RunRef;
  source: RepoSource;
  /** Position of the repository in the run's source list (names its outcome file). */
  index: string;
  settings: PipelineSettings;
  queues: TaskQueues;
}

export async function repoWorkflow(input: RepoWorkflowInput): Promise<RepoOutcome> {
  const { run, source, settings, queues } = input;
  const { io } = activityProxies(queues);
  upsertSearchAttributes([{ key: RunIdKey, value: run.runId }]);

  const snap = await io.snapshotRepository({ run, source });
  if (!snap.ok) {
    const skipped: RepoOutcome = { repoId: null, source, skipped: snap.reason, candidates: 0, accepted: 0, rejected: 0 };
    await io.writeRepoOutcome({ run, index: input.index, outcome: skipped });
    return skipped;
  }
  const { snapshot } = snap;
  upsertSearchAttributes([{ key: RepoKey, value: snapshot.repoId }]);

  const { functions } = await io.listCandidates({ run, snapshot, settings });
  const outcomes = await slidingWindow(functions, settings.functionWindow, (fn) =>
    executeChild(functionWorkflow, {
      workflowId: `${run.runId}/fn/${fn.functionId}`,
      taskQueue: queues.workflows,
      args: [{ run, fn, settings, queues }],
      parentClosePolicy: ParentClosePolicy.TERMINATE,
    }),
  );
  const accepted = outcomes.filter((o) => o.accepted).length;
  const outcome: RepoOutcome = { repoId: snapshot.repoId, source, skipped: null, candidates: functions.length, accepted, rejected: outcomes.length - accepted };
  await io.writeRepoOutcome({ run, index: input.index, outcome });
  return outcome;
}
