/**
 * Replaying rejected functions of a run: each runs again as a FunctionWorkflow under a new
 * workflow id and replaces its own record; the run's summary, files and report are made again.
 *
 * A replay uses the run's frozen settings, unless told otherwise (`overrides`, from
 * `replay.ts --set key=value`): then the changed settings are frozen as a new artifact, and every
 * replayed record names the settings it used (`settingsKey`).
 */
import type { Client } from '@temporalio/client';
import type { FunctionOutcome, PipelineSettings, RunRef } from '../../activities/contracts';
import { candidateIds, summarizeRun, type RunSummaryFile } from '../../activities/dataset/run-files';
import { writeRunOutputs } from '../../activities/report/run-outputs';
import { applyRunSettings, frozenPipelineSettings, overrideRunSettings, pipelineSettingsFrom, queuesFrom, RunSettingsSchema } from '../../activities/run-settings';
import { allRecords, requireCrawlRun, type Store, type StoredRecord } from '../../activities/store/types';
import { RunIdKey } from '../../workflows/search-attributes';
import { workflowKind } from '../../workflows/target-kinds';
import type { Config } from '../../temporal.config';

export interface ReplayFilter {
  stages?: string[];
  functionIds?: string[];
}

type Rejected = Extract<StoredRecord, { accepted: false }>;

export async function rejectedToReplay(store: Store, runId: string, filter: ReplayFilter = {}): Promise<Rejected[]> {
  const stages = filter.stages ?? [];
  const ids = filter.functionIds ?? [];
  const manifest = await store.getRun(runId);
  if (!manifest) throw new Error(`no run ${runId} in the store at ${store.location}`);
  requireCrawlRun(manifest, 'replay');
  const inRun = await candidateIds(store, runId);
  const out: Rejected[] = [];
  for await (const r of allRecords(store, runId)) {
    if (r.accepted || !inRun.has(r.fn.functionId)) continue;
    if ((stages.length === 0 || stages.includes(r.rejection.stage)) && (ids.length === 0 || ids.includes(r.fn.functionId))) out.push(r);
  }
  return out;
}

/** The settings a replay runs with: the run's own, or the run's with overrides, frozen as a new artifact. */
export async function replaySettings(store: Store, config: Config, settingsKey: string, overrides?: Record<string, unknown>): Promise<{ settingsKey: string; pipeline: PipelineSettings }> {
  const raw = await store.getJson(settingsKey);
  const settings = RunSettingsSchema.parse(raw);
  if (!overrides || Object.keys(overrides).length === 0) return { settingsKey, pipeline: frozenPipelineSettings(raw, config) };
  const changed = overrideRunSettings(settings, overrides);
  const pipeline = pipelineSettingsFrom(applyRunSettings(config, changed));
  return { settingsKey: await store.putJson({ ...changed, pipeline, replayOf: settingsKey }), pipeline };
}

export async function replayRejected(options: {
  config: Config;
  client: Client;
  store: Store;
  runId: string;
  filter?: ReplayFilter;
  overrides?: Record<string, unknown>;
  /** Where to write the run's files again; default the run's own output folder. */
  outDir?: string;
}): Promise<{ outcomes: FunctionOutcome[]; summary: RunSummaryFile; settingsKey: string }> {
  const { config, client, store, runId } = options;
  const manifest = await store.getRun(runId);
  if (!manifest) throw new Error(`no run ${runId} in the store at ${store.location}`);
  // An evaluation has no rejected records to replay, and its summary is not a crawl's: never rewritten as one.
  requireCrawlRun(manifest, 'replay');
  const chosen = await rejectedToReplay(store, runId, options.filter);
  const { settingsKey, pipeline } = await replaySettings(store, config, manifest.settingsKey, options.overrides);
  const run: RunRef = { runId, settingsKey, storeId: manifest.storeId };
  const stamp = Date.now().toString(36);
  const outcomes = await Promise.all(
    chosen.map(
      (r) =>
        client.workflow.execute(workflowKind(r.fn).workflowType, {
          workflowId: `${workflowKind(r.fn).workflowId(runId, r.fn)}/replay-${stamp}`,
          taskQueue: config.temporal.taskQueues.workflows,
          workflowExecutionTimeout: pipeline.timeouts.functionWorkflowMs,
          args: [{ run, fn: r.fn, settings: pipeline, queues: queuesFrom(config) }],
          typedSearchAttributes: [{ key: RunIdKey, value: runId }],
        }) as Promise<FunctionOutcome>,
    ),
  );
  const summary = await summarizeRun(store, runId);
  await store.updateRun(runId, { summary });
  const outDir = options.outDir ?? manifest.outDir;
  if (outDir) await writeRunOutputs(store, runId, outDir);
  return { outcomes, summary, settingsKey };
}
