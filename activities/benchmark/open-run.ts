/**
 * One firing of a live benchmark opens a run: the window of creation dates it covers, a GitHub
 * search with the filters frozen when the schedule was made, the sources stored as an artifact
 * (kept out of the workflow history), and the run folder with its `run.json`. The run id is
 * derived from the schedule and the firing time, so a retried firing opens the same run.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ArtifactStore } from '../artifacts/store';
import { writeFileAtomic } from '../artifacts/store';
import type { PipelineSettings, RepoSource, RunRef } from '../contracts';
import type { DatasetSplit } from '../dataset/product-record';
import type { CrawlFilters, GitHubSource } from '../sources';
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
  settings: PipelineSettings;
}

export interface OpenedBenchmarkRun {
  run: RunRef;
  sourcesKey: string;
  repositories: number;
  window: CreationWindow | null;
}

export interface OpenBenchmarkRunDependencies {
  store: ArtifactStore;
  runsDir: string;
  github: () => GitHubSource;
  /** What run.json records about the LLM (the endpoint's address and default model). */
  llm: { baseURL: string; model: string };
}

export async function openBenchmarkRun(deps: OpenBenchmarkRunDependencies, input: OpenBenchmarkRunInput): Promise<OpenedBenchmarkRun> {
  const firedAt = new Date(input.firedAt);
  const window = benchmarkWindow(firedAt, input.everyMs, input.sinceCutoff);
  const runId = benchmarkRunId(input.scheduleId, firedAt);
  const outDir = path.join(deps.runsDir, runId);
  let sources: RepoSource[] = [];
  if (window) {
    const found = await deps.github().search({ ...input.filters, createdFrom: window.from, createdTo: window.to }, { limit: input.limit, seed: input.settings.seed });
    sources = found.repos.map((r): RepoSource => ({ kind: 'github', fullName: r.id }));
  }
  const sourcesKey = await deps.store.putJson(sources);
  fs.mkdirSync(outDir, { recursive: true });
  const benchmark = { scheduleId: input.scheduleId, firedAt: input.firedAt, split: input.split, sinceCutoff: input.sinceCutoff, window, filters: input.filters };
  await writeFileAtomic(path.join(outDir, 'run.json'), JSON.stringify({ runId, sources, settings: input.settings, llm: deps.llm, benchmark }, null, 2) + '\n');
  return { run: { runId, outDir }, sourcesKey, repositories: sources.length, window };
}
