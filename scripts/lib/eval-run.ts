/**
 * Starting an evaluation, training-data or augmentation run: the dataset is read and checked
 * (format, split), each record goes to the artifact store, the run gets an id and an output
 * folder, and one EvalWorkflow is started; `runEval` also waits for it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { createArtifactStore } from '../../activities';
import type { EvalItem, EvalRunRef, EvalRunSummary } from '../../activities/eval/contracts';
import { parseEvalDataset, type EvalRecord } from '../../activities/eval/dataset';
import type { DatasetMeta } from '../../activities/eval/finalize';
import { evalPaths, type StoredEvalRecord } from '../../activities/eval/run-files';
import { parseEvalSettings, type EvalSettings } from '../../activities/eval/settings';
import { declaredSplit, readSplitRegistry, registerSplit, splitConflicts, type SplitUse } from '../../activities/eval/splits';
import { modelForStep } from '../../activities/llm';
import { RunIdKey } from '../../workflows/search-attributes';
import type { Config } from '../../temporal.config';
import { dataPaths } from '../../temporal.config';
import { newRunId, queuesFrom } from './crawl';

/** The run would mix evaluation and training data (or read an unusable dataset): nothing was started. */
export class EvalRefusal extends Error {
  override name = 'EvalRefusal';
}

export interface LoadedDataset {
  records: EvalRecord[];
  raw: Record<string, unknown>[];
  meta: DatasetMeta;
}

export function loadDataset(file: string, limit?: number): LoadedDataset {
  if (!fs.existsSync(file)) throw new EvalRefusal(`dataset ${file} does not exist`);
  let records: EvalRecord[];
  try {
    records = parseEvalDataset(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new EvalRefusal(`${file}: ${(err as Error).message}`);
  }
  const raw = fs
    .readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  if (limit !== undefined) {
    records = records.slice(0, limit);
    raw.splice(limit);
  }
  if (records.length === 0) throw new EvalRefusal(`${file} holds no records`);
  const formats = new Set(records.map((r) => r.format));
  return { records, raw, meta: { file: path.resolve(file), format: formats.size === 1 ? [...formats][0]! : 'mixed', functions: records.length } };
}

/** Which split a task consumes; augmentation builds a dataset and consumes none. */
export function splitUseOf(settings: EvalSettings): SplitUse | null {
  return settings.task === 'rft' ? 'train' : settings.task === 'eval' ? 'eval' : null;
}

/** Refuses to train on an evaluation set, or to use a repository for both splits. */
export function checkSplits(config: Config, dataset: LoadedDataset, use: SplitUse | null): void {
  if (use === null) return;
  if (use === 'train' && declaredSplit(dataset.meta.file, dataset.raw) === 'eval') {
    throw new EvalRefusal(`${dataset.meta.file} is declared an evaluation set: training data is never made from it`);
  }
  const conflicts = splitConflicts(dataset.records.map((r) => r.repo), use, readSplitRegistry(config.dataDir));
  if (conflicts.length > 0) {
    const first = conflicts[0]!;
    throw new EvalRefusal(
      `${conflicts.length} repositor${conflicts.length === 1 ? 'y' : 'ies'} of this dataset ${conflicts.length === 1 ? 'was' : 'were'} already used for ${first.registeredAs} ` +
        `(e.g. ${first.repository} in run ${first.runId} on ${first.dataset}); a run for ${use} would mix the splits (registry: ${path.join(config.dataDir, 'splits.jsonl')})`,
    );
  }
}

export interface StartEvalOptions {
  config: Config;
  client: Client;
  datasetFile: string;
  /** Raw settings (flags); validated here. */
  settings: Partial<EvalSettings>;
  limit?: number;
  runId?: string;
  outDir?: string;
}

export interface StartedEval {
  run: EvalRunRef;
  workflowId: string;
  settings: EvalSettings;
  dataset: DatasetMeta;
  result: () => Promise<EvalRunSummary>;
}

/** Everything a run checks before it starts: settings, the dataset, the splits. Throws EvalRefusal. */
export function checkEval(config: Config, options: Pick<StartEvalOptions, 'datasetFile' | 'settings' | 'limit'>): { settings: EvalSettings; dataset: LoadedDataset; use: SplitUse | null } {
  const parsed = parseEvalSettings(options.settings);
  // The model is fixed when the run starts and travels with its settings.
  const settings: EvalSettings = { ...parsed, model: parsed.model ?? modelForStep(config, 'solve') };
  const dataset = loadDataset(options.datasetFile, options.limit);
  const use = splitUseOf(settings);
  checkSplits(config, dataset, use);
  return { settings, dataset, use };
}

export async function startEval(options: StartEvalOptions): Promise<StartedEval> {
  const { config, client } = options;
  const { settings, dataset, use } = checkEval(config, options);

  const runId = options.runId ?? newRunId(settings.task);
  const outDir = path.resolve(options.outDir ?? path.join(dataPaths(config).runs, runId));
  fs.mkdirSync(outDir, { recursive: true });
  const run: EvalRunRef = { runId, outDir };
  const store = createArtifactStore(config);
  const items: EvalItem[] = [];
  for (let i = 0; i < dataset.records.length; i++) {
    const record = dataset.records[i]!;
    // The line as read goes along, so an augmented dataset keeps every field it had.
    const stored: StoredEvalRecord = { record, raw: dataset.raw[i]! };
    items.push({ functionId: record.functionId, recordKey: await store.putJson(stored), repo: record.repo, qualname: record.qualname });
  }
  const itemsKey = await store.putJson(items);
  fs.writeFileSync(
    evalPaths(outDir).run,
    `${JSON.stringify({ runId, dataset: dataset.meta, itemsKey, settings, llm: { baseURL: config.llm.baseURL }, startedAt: new Date().toISOString() }, null, 2)}\n`,
  );
  if (use) registerSplit(config.dataDir, { split: use, runId, dataset: dataset.meta.file, repositories: [...new Set(dataset.records.map((r) => r.repo))], registeredAt: new Date().toISOString() });

  const workflowId = `${runId}/${settings.task}`;
  const handle = await client.workflow.start('evalWorkflow', {
    workflowId,
    taskQueue: config.temporal.taskQueues.workflows,
    args: [{ run, itemsKey, dataset: dataset.meta, settings, queues: queuesFrom(config) }],
    typedSearchAttributes: [{ key: RunIdKey, value: runId }],
  });
  return { run, workflowId, settings, dataset: dataset.meta, result: () => handle.result() as Promise<EvalRunSummary> };
}

export async function runEval(options: StartEvalOptions): Promise<EvalRunSummary> {
  return (await startEval(options)).result();
}
