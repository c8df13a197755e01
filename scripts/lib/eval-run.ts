/**
 * Starting an evaluation, training-data or augmentation run: the dataset is read and checked
 * (format, splits), each record goes to the store as an artifact (pages of items, so workers on
 * any machine read them and no payload grows with the dataset), the run's settings are frozen
 * with its evaluation settings, the run is registered in the store (kind `eval`), and one
 * EvalWorkflow is started. `result()` waits for it and exports the run's files from the store
 * into the output folder, on this machine.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import type { RunRef, TargetKind } from '../../activities/contracts';
import type { EvalItem, EvalItemIndex, EvalRunSummary } from '../../activities/eval/contracts';
import { parseEvalDataset, parseEvalRows, type DatasetMeta, type EvalRecord, type StoredEvalRecord } from '../../activities/eval/dataset';
import { classEvalPaths, evalPaths, exportEvalFiles } from '../../activities/eval/run-files';
import { evalPipelineSettings, parseEvalSettings, type EvalSettings } from '../../activities/eval/settings';
import { splitCounts, splitNote, trainingRefusal } from '../../activities/eval/splits';
import type { EvalSummary } from '../../activities/eval/summary';
import { modelForStep } from '../../activities/llm';
import type { Store } from '../../activities/store/types';
import { readParquetRows } from '../../activities/tables/parquet-read';
import { RunIdKey } from '../../workflows/search-attributes';
import { runMemo } from './store-check';
import type { Config } from '../../temporal.config';
import { dataPaths } from '../../temporal.config';
import { freezeRunSettings, queuesFrom } from '../../activities/run-settings';
import { newRunId, refuseOtherRunsFolder, resultThroughRestarts } from './crawl';

/**
 * Items per stored page, at most: the workflow loads one page at a time and continues as new
 * only at a page's end, so a page is never larger than the run's `continueAsNewAfter`.
 */
export const EVAL_ITEM_PAGE_SIZE = 100;

/** The run would mix evaluation and training data (or read an unusable dataset): nothing was started. */
export class EvalRefusal extends Error {
  override name = 'EvalRefusal';
  constructor(reason: string) {
    super(`refused: ${reason}`);
  }
}

export interface LoadedDataset {
  records: EvalRecord[];
  raw: Record<string, unknown>[];
  meta: DatasetMeta;
}

/** Dataset rows read ahead of `loadDataset` (an export's Parquet files), each named for errors. */
export type DatasetRows = { where: string; json: Record<string, unknown> }[];

/** A split file of an export (`data/eval-00000-of-00001.parquet`): its split is its name's first part. */
const SPLIT_FILE = /^(train|eval)-.*\.parquet$/;

/**
 * What `--dataset` names, made readable: a JSON Lines file as it is (`rows` absent); a run folder
 * as its dataset.jsonl; an export folder (export.ts) as the rows of its function splits
 * (data/<split>-*.parquet, not the classes configuration); a Parquet file as its rows. The split,
 * which an export keeps as the file rather than a column, is put back on each row.
 */
export async function readDatasetInput(given: string): Promise<{ file: string; rows?: DatasetRows }> {
  if (!fs.existsSync(given)) throw new EvalRefusal(`dataset ${given} does not exist`);
  if (fs.statSync(given).isDirectory()) {
    const jsonl = path.join(given, 'dataset.jsonl');
    if (fs.existsSync(jsonl)) return { file: jsonl };
    const data = path.join(given, 'data');
    const files = fs.existsSync(data) ? fs.readdirSync(data).filter((f) => SPLIT_FILE.test(f)).sort() : [];
    if (files.length === 0) throw new EvalRefusal(`${given} is a folder holding neither dataset.jsonl (a run's folder) nor data/train-*.parquet or data/eval-*.parquet (an export's folder)`);
    const rows: DatasetRows = [];
    for (const f of files) rows.push(...(await parquetRows(path.join(data, f))));
    return { file: path.resolve(given), rows };
  }
  if (given.endsWith('.parquet')) return { file: given, rows: await parquetRows(given) };
  return { file: given };
}

async function parquetRows(file: string): Promise<DatasetRows> {
  let rows: Record<string, unknown>[];
  try {
    rows = await readParquetRows(file);
  } catch (err) {
    throw new EvalRefusal((err as Error).message);
  }
  const split = SPLIT_FILE.exec(path.basename(file))?.[1];
  return rows.map((json, i) => ({ where: `${path.basename(file)} row ${i + 1}`, json: split && json.split === undefined ? { ...json, split } : json }));
}

export function loadDataset(file: string, limit?: number, rows?: DatasetRows): LoadedDataset {
  if (!rows && !fs.existsSync(file)) throw new EvalRefusal(`dataset ${file} does not exist`);
  if (!rows && fs.statSync(file).isDirectory()) throw new EvalRefusal(`dataset ${file} is a folder: read it with readDatasetInput first`);
  const text = rows ? '' : fs.readFileSync(file, 'utf8');
  let records: EvalRecord[];
  try {
    records = rows ? parseEvalRows(rows) : parseEvalDataset(text);
  } catch (err) {
    throw new EvalRefusal(`${file}: ${(err as Error).message}`);
  }
  const raw = rows
    ? rows.map((r) => r.json)
    : text
        .split(/\r?\n/)
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Record<string, unknown>);
  if (limit !== undefined) {
    records = records.slice(0, limit);
    raw.splice(limit);
  }
  if (records.length === 0) throw new EvalRefusal(`${file} holds no records`);
  const formats = new Set(records.map((r) => r.format));
  return {
    records,
    raw,
    meta: { file: path.resolve(file), format: formats.size === 1 ? [...formats][0]! : 'mixed', functions: records.length, splits: splitCounts(records) },
  };
}

export interface StartEvalOptions {
  config: Config;
  client: Client;
  store: Store;
  datasetFile: string;
  /** The dataset's rows when they were read ahead (`readDatasetInput`: an export's Parquet files); else `datasetFile` is read as JSON Lines. */
  datasetRows?: DatasetRows;
  /** Raw settings (flags); validated here. */
  settings: Partial<EvalSettings>;
  limit?: number;
  runId?: string;
  outDir?: string;
}

/** What a finished run gives back: its headline, its summary, and where its files were written. */
export type EvalRunResult = EvalRunSummary & { outDir: string; summary: EvalSummary; files: string[] };

export interface StartedEval {
  run: RunRef;
  outDir: string;
  workflowId: string;
  settings: EvalSettings;
  dataset: DatasetMeta;
  /** What the user should know about the dataset (records of the train split evaluated). */
  notes: string[];
  /** Waits for the run and writes its files into `outDir`. */
  result(): Promise<EvalRunResult>;
}

/** Everything a run checks before it starts: settings, the dataset, the splits. Throws EvalRefusal. */
export function checkEval(config: Config, options: Pick<StartEvalOptions, 'datasetFile' | 'datasetRows' | 'settings' | 'limit'>): { settings: EvalSettings; dataset: LoadedDataset; notes: string[] } {
  const parsed = parseEvalSettings(options.settings);
  // The model is fixed when the run starts and travels with its settings.
  const settings: EvalSettings = { ...parsed, model: parsed.model ?? modelForStep(config, 'solve') };
  const dataset = loadDataset(options.datasetFile, options.limit, options.datasetRows);
  if (settings.task === 'rft') {
    const refusal = trainingRefusal(dataset.records);
    if (refusal) throw new EvalRefusal(`${dataset.meta.file}: ${refusal}`);
  }
  const note = settings.task === 'eval' ? splitNote('eval', dataset.meta.splits) : null;
  return { settings, dataset, notes: note ? [note] : [] };
}

/** Each record as an artifact, the items in pages; returns the index's key. */
async function storeItems(store: Store, dataset: LoadedDataset, settings: EvalSettings): Promise<string> {
  const pageSize = Math.min(EVAL_ITEM_PAGE_SIZE, settings.continueAsNewAfter);
  const pages: string[] = [];
  for (let start = 0; start < dataset.records.length; start += pageSize) {
    const items: EvalItem[] = [];
    for (let i = start; i < Math.min(start + pageSize, dataset.records.length); i++) {
      const record = dataset.records[i]!;
      // The line as read goes along, so an augmented dataset keeps every field it had.
      const stored: StoredEvalRecord = { record, raw: dataset.raw[i]! };
      items.push({ functionId: record.functionId, recordKey: await store.putJson(stored), repo: record.repo, qualname: record.qualname });
    }
    pages.push(await store.putJson(items));
  }
  const index: EvalItemIndex = { dataset: dataset.meta, total: dataset.records.length, pages };
  return store.putJson(index);
}

/** Where each kind of evaluation writes the file that names its run (another run's folder is refused by it). */
const RUN_FILE: Readonly<Record<TargetKind, (outDir: string) => string>> = { function: (d) => evalPaths(d).run, class: (d) => classEvalPaths(d).run };

export interface NewEvalRun {
  runId: string;
  /** What it evaluates: functions (`eval.ts`) or classes (`eval.ts --classes`), kept in its manifest. */
  targetKind: TargetKind;
  settings: EvalSettings;
  /** Its output folder (resolved); refused when it holds another run's files of the same kind. */
  outDir: string;
  /** Stores the run's items and returns their index's key (after the folder check: nothing is stored for a refused run). */
  storeItems: () => Promise<string>;
  /** How many items. */
  sources: number;
}

/**
 * Creates an evaluation run, function or class alike: the output folder checked, the items stored,
 * the settings frozen with the pipeline's (`evalPipelineSettings`), the manifest written, the
 * folder made. Returns what the run's workflow is started with.
 */
export async function createEvalRun(store: Store, config: Config, r: NewEvalRun): Promise<{ run: RunRef; itemsKey: string; pipeline: ReturnType<typeof evalPipelineSettings> }> {
  refuseOtherRunsFolder(r.outDir, RUN_FILE[r.targetKind](r.outDir), r.runId, 'choose another --out');
  const pipeline = evalPipelineSettings(config, r.settings);
  const itemsKey = await r.storeItems();
  const manifest = await store.createRun({
    runId: r.runId,
    kind: 'eval',
    targetKind: r.targetKind,
    createdAt: new Date().toISOString(),
    settingsKey: await freezeRunSettings(store, config, { pipeline, eval: r.settings }),
    sourcesKey: itemsKey,
    sources: r.sources,
    outDir: r.outDir,
  });
  fs.mkdirSync(r.outDir, { recursive: true });
  return { run: { runId: r.runId, settingsKey: manifest.settingsKey, storeId: manifest.storeId }, itemsKey, pipeline };
}

export async function startEval(options: StartEvalOptions): Promise<StartedEval> {
  const { config, client, store } = options;
  const { settings, dataset, notes } = checkEval(config, options);

  const runId = options.runId ?? newRunId(settings.task);
  const outDir = path.resolve(options.outDir ?? path.join(dataPaths(config).runs, runId));
  const { run, itemsKey, pipeline } = await createEvalRun(store, config, {
    runId,
    targetKind: 'function',
    settings,
    outDir,
    storeItems: () => storeItems(store, dataset, settings),
    sources: dataset.records.length,
  });
  const queues = queuesFrom(config);

  const workflowId = `${runId}/${settings.task}`;
  const handle = await client.workflow.start('evalWorkflow', {
    workflowId,
    taskQueue: config.temporal.taskQueues.workflows,
    args: [{ run, itemsKey, settings, pipeline, queues }],
    typedSearchAttributes: [{ key: RunIdKey, value: runId }],
    // Workers read the run's store from here at start (scripts/lib/store-check.ts).
    memo: runMemo(run, queues),
  });
  return {
    run,
    outDir,
    workflowId,
    settings,
    dataset: dataset.meta,
    notes,
    result: async () => {
      const done = (await resultThroughRestarts(handle)) as EvalRunSummary;
      const exported = await exportEvalFiles(store, runId, outDir);
      return { ...done, outDir, summary: exported.summary, files: exported.files };
    },
  };
}

export async function runEval(options: StartEvalOptions): Promise<EvalRunResult> {
  return (await startEval(options)).result();
}
