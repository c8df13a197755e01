/**
 * Replaying rejected functions of a run: each runs again as a FunctionWorkflow under a new
 * workflow id, replaces its own record, and the run's files are assembled again.
 */
import type { Client } from '@temporalio/client';
import type { FunctionOutcome } from '../../activities/contracts';
import { finalizeRunFiles, readStoredRecords, type StoredRecord } from '../../activities/dataset/records';
import { RunIdKey } from '../../workflows/search-attributes';
import type { Config } from '../../temporal.config';
import { queuesFrom, settingsFrom } from './crawl';

export interface ReplayFilter {
  stages?: string[];
  functionIds?: string[];
}

export async function rejectedToReplay(outDir: string, filter: ReplayFilter = {}): Promise<Extract<StoredRecord, { accepted: false }>[]> {
  const stages = filter.stages ?? [];
  const ids = filter.functionIds ?? [];
  return (await readStoredRecords(outDir)).filter(
    (r): r is Extract<StoredRecord, { accepted: false }> =>
      !r.accepted && (stages.length === 0 || stages.includes(r.rejection.stage)) && (ids.length === 0 || ids.includes(r.fn.functionId)),
  );
}

export async function replayRejected(options: { config: Config; client: Client; runId: string; outDir: string; filter?: ReplayFilter }) {
  const { config, client, runId, outDir } = options;
  const chosen = await rejectedToReplay(outDir, options.filter);
  const stamp = Date.now().toString(36);
  const outcomes = await Promise.all(
    chosen.map(
      (r) =>
        client.workflow.execute('functionWorkflow', {
          workflowId: `${runId}/fn/${r.fn.functionId}/replay-${stamp}`,
          taskQueue: config.temporal.taskQueues.workflows,
          args: [{ run: { runId, outDir }, fn: r.fn, settings: settingsFrom(config), queues: queuesFrom(config) }],
          typedSearchAttributes: [{ key: RunIdKey, value: runId }],
        }) as Promise<FunctionOutcome>,
    ),
  );
  const summary = await finalizeRunFiles(runId, outDir);
  return { outcomes, summary };
}
