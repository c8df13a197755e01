/**
 * One firing of a live benchmark (started by a Temporal Schedule, `scripts/schedule.ts`): open a
 * run of the repositories created in the window since the last firing and crawl them as a child
 * crawl, which writes the run's files and report. One firing, one run.
 */
import { defineSearchAttributeKey } from '@temporalio/common';
import { ParentClosePolicy, executeChild, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { OpenBenchmarkRunInput } from '../activities/benchmark/open-run';
import type { CrawlOutcome, RunSummary, TaskQueues } from '../activities/contracts';
import { activityProxies } from './activities';
import { crawlWorkflow } from './crawl';
import { boundedKeyword } from './ids';
import { RunIdKey } from './search-attributes';

/** Set by the server on every workflow a schedule starts: the time the firing was due. */
const ScheduledStartTimeKey = defineSearchAttributeKey('TemporalScheduledStartTime', 'DATETIME');

export interface BenchmarkWorkflowInput extends Omit<OpenBenchmarkRunInput, 'firedAt'> {
  queues: TaskQueues;
}

export interface BenchmarkOutcome {
  runId: string;
  window: { from: string; to: string } | null;
  repositories: number;
  summary: RunSummary;
  outDir: string;
  /** The run's report, or null when its files could not be written (`outputsError` says why). */
  report: string | null;
  outputsError: string | null;
}

export async function benchmarkWorkflow(input: BenchmarkWorkflowInput): Promise<BenchmarkOutcome> {
  const { queues, ...open } = input;
  const { bench } = activityProxies(queues, input.settings);
  // The due time, not the start time: a firing buffered behind a long one keeps its own window.
  const firedAt = workflowInfo().typedSearchAttributes.get(ScheduledStartTimeKey) ?? workflowInfo().startTime;

  const opened = await bench.openBenchmarkRun({ ...open, firedAt: firedAt.toISOString() });
  const { run } = opened;
  upsertSearchAttributes([{ key: RunIdKey, value: boundedKeyword(run.runId) }]);
  const crawled: CrawlOutcome = await executeChild(crawlWorkflow, {
    workflowId: `${run.runId}/crawl`,
    taskQueue: queues.workflows,
    args: [{ run, sourcesKey: opened.sourcesKey, settings: input.settings, queues }],
    typedSearchAttributes: [{ key: RunIdKey, value: boundedKeyword(run.runId) }],
    parentClosePolicy: ParentClosePolicy.TERMINATE,
    // A crawl that is stuck ends at its time limit, so the schedule's next firing is not held behind it.
    ...(opened.crawlTimeoutMs !== undefined ? { workflowExecutionTimeout: opened.crawlTimeoutMs } : {}),
  });
  const { outputs, outputsError, ...summary } = crawled;
  return { runId: run.runId, window: opened.window, repositories: opened.repositories, summary, outDir: outputs?.outDir ?? opened.outDir, report: outputs?.report ?? null, outputsError };
}
