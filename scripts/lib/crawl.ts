/**
 * Starting a crawl: the sources go to the artifact store, the run gets an id and an output
 * folder, and one CrawlWorkflow is started; `runCrawl` also waits for its summary.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { createArtifactStore } from '../../activities';
import type { PipelineSettings, RepoSource, RunRef, RunSummary, TaskQueues } from '../../activities/contracts';
import { RunIdKey } from '../../workflows/search-attributes';
import type { Config } from '../../temporal.config';
import { dataPaths } from '../../temporal.config';

export function settingsFrom(config: Config): PipelineSettings {
  return {
    debugRounds: config.loops.debugRounds,
    coverageRounds: config.loops.coverageRounds,
    coverageThreshold: config.loops.coverageThreshold,
    regenerateAttempts: config.loops.regenerateAttempts,
    maxFunctionsPerRepo: config.crawl.maxFunctionsPerRepo,
    seed: config.crawl.seed,
    functionWindow: config.crawl.functionWindow,
    repoWindow: config.crawl.repoWindow,
    continueAsNewAfter: config.crawl.continueAsNewAfter,
  };
}

export function queuesFrom(config: Config): TaskQueues {
  return { ...config.temporal.taskQueues };
}

/** A sortable, readable run id: `<prefix>-YYYYMMDD-HHMMSS-<random>`. */
export function newRunId(prefix = 'run'): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${prefix}-${stamp}-${randomBytes(3).toString('hex')}`;
}

export interface StartCrawlOptions {
  config: Config;
  client: Client;
  sources: RepoSource[];
  runId?: string;
  outDir?: string;
}

export async function startCrawl(options: StartCrawlOptions): Promise<{ run: RunRef; workflowId: string; result: () => Promise<RunSummary> }> {
  const { config, client } = options;
  const runId = options.runId ?? newRunId();
  const outDir = path.resolve(options.outDir ?? path.join(dataPaths(config).runs, runId));
  fs.mkdirSync(outDir, { recursive: true });
  const run: RunRef = { runId, outDir };
  const store = createArtifactStore(config);
  const sources = options.sources.map((s) => (s.kind === 'local' ? { ...s, path: path.resolve(s.path) } : s));
  const sourcesKey = await store.putJson(sources);
  fs.writeFileSync(path.join(outDir, 'run.json'), JSON.stringify({ runId, sources, settings: settingsFrom(config), llm: { baseURL: config.llm.baseURL, model: config.llm.model } }, null, 2) + '\n');
  const workflowId = `${runId}/crawl`;
  const handle = await client.workflow.start('crawlWorkflow', {
    workflowId,
    taskQueue: config.temporal.taskQueues.workflows,
    args: [{ run, sourcesKey, settings: settingsFrom(config), queues: queuesFrom(config) }],
    typedSearchAttributes: [{ key: RunIdKey, value: runId }],
  });
  return { run, workflowId, result: () => handle.result() as Promise<RunSummary> };
}

export async function runCrawl(options: StartCrawlOptions): Promise<RunSummary> {
  const started = await startCrawl(options);
  return started.result();
}
