/**
 * One firing of a live benchmark opens a run: the window of creation dates it covers, a GitHub
 * search with the filters frozen when the schedule was made, and the run registered in the store
 * with the schedule's frozen settings and the sources found. The run id is derived from the
 * schedule and the firing time, so a retried firing finds the run it opened and searches no more.
 */
import type { PipelineSettings, RepoSource, RunRef } from '../contracts';
import type { DatasetSplit } from '../dataset/product-record';
import type { CrawlFilters, GitHubSource } from '../sources';
import type { Store } from '../store/types';
import { crawlWorkflowBudgetMs } from '../workflow-budgets';
import { benchmarkRunId, benchmarkWindow, type CreationWindow } from './window';

/** The search filters of a schedule, fixed when it is created (the dates come from each firing). */
export type BenchmarkFilters = Omit<CrawlFilters, 'createdFrom' | 'createdTo'>;

export interface OpenBenchmarkRunInput {
  scheduleId: string;
  /** When the firing was scheduled (ISO timestamp). */
  firedAt: string;
  everyMs: number;
  /** Repositories created before this day (YYYY-MM-DD) are never searched. */
  sinceCutoff: string;
  split: DatasetSplit;
  filters: BenchmarkFilters;
  limit: number;
  /** Artifact key of the settings frozen when the schedule was created; every firing's run uses them. */
  settingsKey: string;
  /** The store the schedule was created against (its settings artifact is there). */
  storeId: string;
  settings: PipelineSettings;
}

export interface OpenedBenchmarkRun {
  run: RunRef;
  /** The crawl's time limit (ms): the configured one, else derived from its repositories; absent for settings frozen before limits existed. */
  crawlTimeoutMs?: number;
  /** Where the run's files and report go. */
  outDir: string;
  sourcesKey: string;
  repositories: number;
  window: CreationWindow | null;
}

export interface OpenBenchmarkRunDependencies {
  store: Store;
  /** The folder a run's files go to, by run id. */
  outDirOf: (runId: string) => string;
  github: () => GitHubSource;
}

export async function openBenchmarkRun(deps: OpenBenchmarkRunDependencies, input: OpenBenchmarkRunInput): Promise<OpenedBenchmarkRun> {
  const { store } = deps;
  const firedAt = new Date(input.firedAt);
  const window = benchmarkWindow(firedAt, input.everyMs, input.sinceCutoff);
  const runId = benchmarkRunId(input.scheduleId, firedAt);
  let manifest = await store.getRun(runId);
  if (!manifest) {
    let sources: RepoSource[] = [];
    if (window) {
      const found = await deps.github().search({ ...input.filters, createdFrom: window.from, createdTo: window.to }, { limit: input.limit, seed: input.settings.seed });
      sources = found.repos.map((r): RepoSource => ({ kind: 'github', fullName: r.id, split: input.split }));
    }
    manifest = await store.createRun({
      runId,
      createdAt: input.firedAt,
      settingsKey: input.settingsKey,
      sourcesKey: await store.putJson(sources),
      sources: sources.length,
      outDir: deps.outDirOf(runId),
    });
  }
  const crawlTimeoutMs = crawlWorkflowBudgetMs(input.settings, manifest.sources);
  return {
    run: { runId, settingsKey: manifest.settingsKey, storeId: manifest.storeId },
    ...(crawlTimeoutMs !== undefined ? { crawlTimeoutMs } : {}),
    outDir: manifest.outDir ?? deps.outDirOf(runId),
    sourcesKey: manifest.sourcesKey!,
    repositories: manifest.sources,
    window,
  };
}
