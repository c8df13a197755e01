/**
 * Starting a crawl: the run's settings are frozen into the store, local folders are pinned and
 * stored (workers elsewhere cannot read them), the sources are de-duplicated and stored, the run
 * is registered with its output folder, and one CrawlWorkflow is started; its last activity
 * writes the run's files and report into that folder. `result()` waits for it.
 *
 * A run id or output folder that is already taken is refused, unless the run is resumed on
 * purpose (`resume: true`): then the run's own frozen settings and sources are used, functions
 * that already have a record are not run again, and a crawl still running is followed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { isGrpcServiceError, ServiceError, WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { CrawlOutcome, RepoSource, RunRef } from '../../activities/contracts';
import type { RunSummaryFile } from '../../activities/dataset/run-files';
import { runPaths } from '../../activities/dataset/records';
import { RunNotFoundError } from '../../activities/dataset/run-reader';
import { localRepoId, snapshotLocalFolder, SourceError } from '../../activities/sources/repo-source';
import { freezeRunSettings, frozenPipelineSettings, queuesFrom } from '../../activities/run-settings';
import { RunExistsError, type RunManifest, type Store } from '../../activities/store/types';
import { RunIdKey } from '../../workflows/search-attributes';
import { runMemo } from './store-check';
import type { Config } from '../../temporal.config';
import { dataPaths } from '../../temporal.config';

/** A sortable, readable run id: `<prefix>-YYYYMMDD-HHMMSS-<random>`. */
export function newRunId(prefix = 'run'): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${prefix}-${stamp}-${randomBytes(3).toString('hex')}`;
}

export interface StartCrawlOptions {
  config: Config;
  client: Client;
  store: Store;
  sources: RepoSource[];
  runId?: string;
  outDir?: string;
  /** Continue an existing run with its own settings and sources. */
  resume?: boolean;
  log?: (line: string) => void;
}

export interface StartedCrawl {
  run: RunRef;
  manifest: RunManifest;
  outDir: string;
  workflowId: string;
  /** Waits for the crawl (which writes its files into `outDir`). */
  result(): Promise<CrawlResult>;
}

/** The run's summary, and where its files were written. */
export type CrawlResult = RunSummaryFile & { outDir: string; datasetFile: string; reportFile: string };

/** A source's identity: the same repository at the same commit is crawled once. */
function sourceIdentity(s: RepoSource): string {
  if (s.kind === 'github') return `github:${s.fullName.toLowerCase()}@${s.commit ?? ''}`;
  return s.pinned ? `local:${s.pinned.repoId}@${s.pinned.commit}` : `path:${path.resolve(s.path)}:${s.name ?? ''}`;
}

/** Pins and stores local folders, and drops repeated sources (first one wins). */
export async function prepareSources(store: Store, sources: RepoSource[], log: (line: string) => void = () => undefined): Promise<RepoSource[]> {
  const seen = new Set<string>();
  const out: RepoSource[] = [];
  for (const raw of sources) {
    let source: RepoSource = raw.kind === 'local' ? { ...raw, path: path.resolve(raw.path) } : raw;
    if (source.kind === 'local' && !source.pinned) {
      try {
        source = { ...source, name: localRepoId(source), pinned: await snapshotLocalFolder(store, source) };
      } catch (err) {
        // Left unpinned: the crawl records it as skipped with the reason.
        if (!(err instanceof SourceError)) throw err;
      }
    }
    const id = sourceIdentity(source);
    if (seen.has(id)) {
      log(`source ${id} is listed more than once: crawled once`);
      continue;
    }
    seen.add(id);
    out.push(source);
  }
  return out;
}

/**
 * Refuses an output folder that holds another run's files (`runFile` names the run it holds);
 * `hint` says what the user may do instead.
 */
export function refuseOtherRunsFolder(outDir: string, runFile: string, runId: string, hint: string): void {
  if (!fs.existsSync(runFile)) return;
  let other: string | undefined;
  try {
    other = (JSON.parse(fs.readFileSync(runFile, 'utf8')) as { runId?: string }).runId;
  } catch {
    other = undefined;
  }
  if (other && other !== runId) throw new RunExistsError(`${outDir} holds the files of run ${other}: ${hint.replace('{run}', other)}`);
}

export async function startCrawl(options: StartCrawlOptions): Promise<StartedCrawl> {
  const { config, client, store } = options;
  const log = options.log ?? (() => undefined);
  const runId = options.runId ?? newRunId();
  const outDir = path.resolve(options.outDir ?? path.join(dataPaths(config).runs, runId));
  refuseOtherRunsFolder(outDir, runPaths(outDir).run, runId, 'choose another --out, or continue that run with --run-id {run} --resume');

  const existing = await store.getRun(runId);
  let manifest: RunManifest;
  if (existing) {
    if (!options.resume) {
      throw new RunExistsError(
        `run ${runId} already exists (${existing.status}, started ${existing.createdAt}): continue it with --resume, or choose another --run-id`,
      );
    }
    manifest = await store.updateRun(runId, { status: 'running', resumed: existing.resumed + 1, outDir });
    log(`resuming run ${runId} with its own settings and sources; functions already recorded are not run again`);
  } else {
    if (options.resume) throw new RunNotFoundError(`cannot resume run ${runId}: there is no such run in the store at ${store.location}`);
    const sources = await prepareSources(store, options.sources, log);
    manifest = await store.createRun({
      runId,
      createdAt: new Date().toISOString(),
      settingsKey: await freezeRunSettings(store, config),
      sourcesKey: await store.putJson(sources),
      sources: sources.length,
      outDir,
    });
  }
  fs.mkdirSync(outDir, { recursive: true });
  const run: RunRef = { runId, settingsKey: manifest.settingsKey, storeId: manifest.storeId };
  const settings = frozenPipelineSettings(await store.getJson(manifest.settingsKey), config);

  const workflowId = `${runId}/crawl`;
  let handle = client.workflow.getHandle(workflowId);
  let running = false;
  try {
    running = (await handle.describe()).status.name === 'RUNNING';
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  if (running) {
    log(`run ${runId} is still crawling: following it`);
  } else {
    handle = await client.workflow.start('crawlWorkflow', {
      workflowId,
      taskQueue: config.temporal.taskQueues.workflows,
      args: [{ run, sourcesKey: manifest.sourcesKey!, settings, queues: queuesFrom(config) }],
      typedSearchAttributes: [{ key: RunIdKey, value: runId }],
      // Workers read the run's store from here at start (scripts/lib/store-check.ts).
      memo: runMemo(run, queuesFrom(config)),
    });
  }
  return {
    run,
    manifest,
    outDir,
    workflowId,
    result: async () => {
      const outcome = (await resultThroughRestarts(handle)) as CrawlOutcome;
      if (!outcome.outputs) {
        throw new RunFilesError(`run ${runId} finished, but its files could not be written to ${outDir}: ${outcome.outputsError ?? 'unknown'}; the run is whole in the store (tsx scripts/status.ts, report.ts and export.ts read it from there)`);
      }
      const summary = (await store.getRun(runId))?.summary as RunSummaryFile;
      return { ...summary, outDir: outcome.outputs.outDir, datasetFile: outcome.outputs.dataset, reportFile: outcome.outputs.report };
    },
  };
}

/** The crawl finished and is whole in the store, but its folder could not be written. */
export class RunFilesError extends Error {
  override name = 'RunFilesError';
}

/** gRPC UNAVAILABLE (14) and DEADLINE_EXCEEDED (4): the server is restarting or out of reach for a moment. */
function serverAway(err: unknown): boolean {
  const grpc = isGrpcServiceError(err) ? err : err instanceof ServiceError && isGrpcServiceError(err.cause) ? err.cause : null;
  return grpc !== null && (grpc.code === 14 || grpc.code === 4);
}

/** Waits for a workflow's result, riding out a Temporal server restart of up to `patienceMs`. */
export async function resultThroughRestarts(handle: WorkflowHandle, patienceMs = 10 * 60_000): Promise<unknown> {
  let awaySince: number | null = null;
  for (;;) {
    try {
      return await handle.result();
    } catch (err) {
      if (!serverAway(err)) throw err;
      awaySince ??= Date.now();
      if (Date.now() - awaySince > patienceMs) throw err;
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

export async function runCrawl(options: StartCrawlOptions): Promise<CrawlResult> {
  const started = await startCrawl(options);
  return started.result();
}
