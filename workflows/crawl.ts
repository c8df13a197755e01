/**
 * A crawl: every repository of a run through a bounded window of RepoWorkflow children,
 * continuing as new every `continueAsNewAfter` repositories so the history stays small,
 * then the dataset, rejections and funnel are written.
 */
import { ParentClosePolicy, continueAsNew, executeChild, upsertSearchAttributes } from '@temporalio/workflow';
import type { PipelineSettings, RunRef, RunSummary, TaskQueues } from '../activities/contracts';
import { activityProxies } from './activities';
import { repoWorkflow } from './repo';
import { RunIdKey } from './search-attributes';
import { slidingWindow } from './window';

export interface CrawlWorkflowInput {
  run: RunRef;
  /** Artifact key of the JSON list of repository sources (kept out of the history). */
  sourcesKey: string;
  settings: PipelineSettings;
  queues: TaskQueues;
  /** Index of the next source, carried across continue-as-new. */
  cursor?: number;
}

export async function crawlWorkflow(input: CrawlWorkflowInput): Promise<RunSummary> {
  const { run, settings, queues } = input;
  const { io } = activityProxies(queues);
  upsertSearchAttributes([{ key: RunIdKey, value: run.runId }]);

  const cursor = input.cursor ?? 0;
  const page = await io.loadSources({ sourcesKey: input.sourcesKey, offset: cursor, limit: settings.continueAsNewAfter });
  await slidingWindow(page.sources, settings.repoWindow, (source, i) =>
    executeChild(repoWorkflow, {
      workflowId: `${run.runId}/repo/${cursor + i}`,
      taskQueue: queues.workflows,
      args: [{ run, source, index: String(cursor + i), settings, queues }],
      parentClosePolicy: ParentClosePolicy.TERMINATE,
    }),
  );
  const next = cursor + page.sources.length;
  if (next < page.total) {
    await continueAsNew<typeof crawlWorkflow>({ ...input, cursor: next });
  }
  // Records are written by each function as it ends; the run's files are assembled from them.
  return io.finalizeRun({ run });
}
