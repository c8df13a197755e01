/**
 * A crawl: every repository of a run through a bounded window of RepoWorkflow children,
 * continuing as new every `continueAsNewAfter` repositories so the history stays small, then the
 * run is finalized (its summary computed from the records in the store) and its files and report
 * are written into its folder, whoever launched it. A repository whose workflow fails is recorded
 * as skipped with the failure, and the crawl goes on: it always finalizes (docs/architecture.md, invariant 8).
 */
import { ParentClosePolicy, continueAsNew, executeChild, upsertSearchAttributes } from '@temporalio/workflow';
import type { CrawlOutcome, PipelineSettings, RunOutputs, RunRef, TaskQueues } from '../activities/contracts';
import { activityProxies } from './activities';
import { activityFailureReason, failureText } from './failures';
import { boundedKeyword, boundedSummary } from './ids';
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

export async function crawlWorkflow(input: CrawlWorkflowInput): Promise<CrawlOutcome> {
  const { run, settings, queues } = input;
  const { io } = activityProxies(queues, settings);
  upsertSearchAttributes([{ key: RunIdKey, value: boundedKeyword(run.runId) }]);

  const cursor = input.cursor ?? 0;
  const page = await io.loadSources({ run, sourcesKey: input.sourcesKey, offset: cursor, limit: settings.continueAsNewAfter });
  await slidingWindow(page.sources, settings.repoWindow, async (source, i) => {
    const index = cursor + i;
    try {
      await executeChild(repoWorkflow, {
        workflowId: `${run.runId}/repo/${index}`,
        taskQueue: queues.workflows,
        args: [{ run, source, index, settings, queues }],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        // A repository that is stuck ends after its time limit and is recorded as skipped.
        workflowExecutionTimeout: settings.timeouts.repoWorkflowMs,
        staticSummary: boundedSummary(source.kind === 'github' ? source.fullName : (source.name ?? source.path)),
      });
    } catch (err) {
      // The repository's functions that were recorded stay recorded; the repository is noted.
      await io
        .writeRepoOutcome({ run, index, outcome: { repoId: null, source, skipped: `internal: the repository's workflow failed: ${failureText(err)}`, candidates: 0, accepted: 0, rejected: 0 }, candidates: null })
        .catch(() => undefined);
    }
  });
  const next = cursor + page.sources.length;
  if (next < page.total) {
    await continueAsNew<typeof crawlWorkflow>({ ...input, cursor: next });
  }
  // Records are written by each function as it ends; the run's summary is computed from them.
  const summary = await io.finalizeRun({ run });
  // The run is complete in the store whatever happens to its files: a folder that cannot be
  // written is reported, and the files can be written again from the store (report.ts, export.ts).
  let outputs: RunOutputs | null = null;
  let outputsError: string | null = null;
  try {
    outputs = await io.writeRunOutputs({ run });
  } catch (err) {
    outputsError = activityFailureReason(err);
  }
  return { ...summary, outputs, outputsError };
}
