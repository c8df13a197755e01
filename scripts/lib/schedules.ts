/**
 * Live-benchmark schedules: a Temporal Schedule per benchmark that starts `benchmarkWorkflow`
 * every period; each firing crawls the repositories created since the last one (after the
 * cutoff) into a fresh run with its report. The search filters and the run settings are taken
 * from the configuration when the schedule is created (the settings frozen into the store) and
 * travel with every firing.
 */
import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleDescription } from '@temporalio/client';
import { msToNumber } from '@temporalio/common/lib/time';
import type { BenchmarkFilters } from '../../activities/benchmark/open-run';
import type { DatasetSplit } from '../../activities/dataset/product-record';
import { crawlFiltersFromConfig } from '../../activities/sources/from-config';
import type { Config } from '../../temporal.config';
import type { BenchmarkWorkflowInput } from '../../workflows/benchmark';
import { UsageError } from './cli';
import type { Store } from '../../activities/store/types';
import { freezeRunSettings, pipelineSettingsFrom, queuesFrom } from '../../activities/run-settings';

export const BENCHMARK_WORKFLOW = 'benchmarkWorkflow';

export interface CreateBenchmarkOptions {
  scheduleId: string;
  /** A duration as Temporal reads it: '30d', '12h', '5s'. */
  every: string;
  split: DatasetSplit;
  /** YYYY-MM-DD: repositories created before it are never searched. */
  sinceCutoff: string;
  limit: number;
}

/** The period in milliseconds, or an error naming what is accepted. */
export function parseEvery(every: string): number {
  let ms: number;
  try {
    ms = msToNumber(every as Parameters<typeof msToNumber>[0]);
  } catch {
    throw new UsageError(`--every ${every}: not a duration (examples: 30d, 12h, 90m, 5s)`);
  }
  if (!Number.isFinite(ms) || ms < 1000) throw new UsageError(`--every ${every}: the period must be at least one second`);
  return ms;
}

export async function createBenchmarkSchedule(client: Client, store: Store, config: Config, options: CreateBenchmarkOptions): Promise<BenchmarkScheduleView> {
  const everyMs = parseEvery(options.every);
  const { createdFrom: _from, createdTo: _to, ...filters } = crawlFiltersFromConfig(config, options.split);
  void _from;
  void _to;
  const input: BenchmarkWorkflowInput = {
    scheduleId: options.scheduleId,
    everyMs,
    sinceCutoff: options.sinceCutoff,
    split: options.split,
    filters: filters satisfies BenchmarkFilters,
    limit: options.limit,
    settingsKey: await freezeRunSettings(store, config),
    storeId: await store.storeId(),
    settings: pipelineSettingsFrom(config),
    queues: queuesFrom(config),
  };
  const handle = await client.schedule.create({
    scheduleId: options.scheduleId,
    spec: { intervals: [{ every: everyMs }] },
    action: {
      type: 'startWorkflow',
      workflowType: BENCHMARK_WORKFLOW,
      // Temporal appends the firing time, so each firing is its own workflow.
      workflowId: options.scheduleId,
      taskQueue: config.temporal.taskQueues.workflows,
      args: [input],
    },
    // A firing due while the previous one still crawls waits for it; none is dropped, and each
    // keeps the window of its due time.
    policies: { overlap: ScheduleOverlapPolicy.BUFFER_ONE },
    memo: { repost: { kind: 'live-benchmark', every: options.every, split: options.split, sinceCutoff: options.sinceCutoff, limit: options.limit } },
  });
  return viewOf(await handle.describe());
}

export interface BenchmarkScheduleView {
  scheduleId: string;
  every: string;
  split: string;
  sinceCutoff: string;
  limit: number;
  paused: boolean;
  actionsTaken: number;
  running: number;
  nextFiring: Date | null;
  recent: { scheduledAt: Date; workflowId: string }[];
}

function viewOf(d: ScheduleDescription): BenchmarkScheduleView {
  const memo = ((d.memo ?? {}) as { repost?: { every?: string; split?: string; sinceCutoff?: string; limit?: number } }).repost ?? {};
  return {
    scheduleId: d.scheduleId,
    every: memo.every ?? '?',
    split: memo.split ?? '?',
    sinceCutoff: memo.sinceCutoff ?? '?',
    limit: memo.limit ?? 0,
    paused: d.state.paused,
    actionsTaken: d.info.numActionsTaken,
    running: d.info.runningActions.length,
    nextFiring: d.info.nextActionTimes[0] ?? null,
    recent: d.info.recentActions.map((a) => ({ scheduledAt: a.scheduledAt, workflowId: a.action.workflow.workflowId })),
  };
}

/** The schedules that start benchmark firings (other schedules in the namespace are left out). */
export async function listBenchmarkSchedules(client: Client): Promise<BenchmarkScheduleView[]> {
  const out: BenchmarkScheduleView[] = [];
  for await (const s of client.schedule.list()) {
    if (s.action?.workflowType !== BENCHMARK_WORKFLOW) continue;
    try {
      out.push(viewOf(await client.schedule.getHandle(s.scheduleId).describe()));
    } catch (err) {
      // Deleted between the listing and the description.
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
  }
  return out.sort((a, b) => a.scheduleId.localeCompare(b.scheduleId));
}

export async function describeBenchmarkSchedule(client: Client, scheduleId: string): Promise<BenchmarkScheduleView> {
  return viewOf(await client.schedule.getHandle(scheduleId).describe());
}

/** Deletes the schedule; firings already running finish, none starts after. */
export async function deleteBenchmarkSchedule(client: Client, scheduleId: string): Promise<void> {
  await client.schedule.getHandle(scheduleId).delete();
}
