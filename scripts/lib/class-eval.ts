/**
 * `eval.ts --classes`: class-level evaluation over a `classes-dataset.jsonl`, run as the function
 * evaluation is: each record goes to the store, the run's settings are frozen, and one
 * ClassEvalWorkflow (workflows/eval-class.ts) asks the model through the LLM gateway (the
 * `class_solve` prompt, n samples per class; cached, each exchange recorded, its cost counted),
 * runs each answer's class in the sandbox as `<Class>_new_implementation` with each test function
 * on its own, repairs a failing class for up to `repairRounds` rounds (`class_repair`: which tests
 * failed and what they raised), and scores it by the tests and by BLEU, ROUGE-L and TSED against
 * the original class (activities/eval/class-eval.ts). `--ground-truth` answers with each record's
 * own class instead of asking a model (a check of the environments: every test passes,
 * similarity 1; no LLM call).
 *
 * Writes `class-eval.jsonl` (a line per class in the dataset's order: every sample's per-test
 * results, repair rounds, similarity and cost) and `class-eval-summary.json` (Pass@k over whole
 * classes, after each repair round, per-test pass rate and similarity, overall, per documentation
 * level and per metric quartile, and the run's LLM usage and cost) and `class-eval-run.json` (its
 * manifest and settings) into the output folder (activities/eval/run-files.ts). The run is created
 * as a function evaluation's is (`createEvalRun`), stored as an evaluation of classes.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import type { ClassEvalResult, ClassEvalSummary } from '../../activities/eval/class-eval';
import type { EvalItem, EvalItemIndex } from '../../activities/eval/contracts';
import { exportClassEvalFiles } from '../../activities/eval/run-files';
import { parseEvalSettings, type EvalSettings } from '../../activities/eval/settings';
import type { StoredClassRecord } from '../../activities/eval-class-activities';
import { modelForStep } from '../../activities/llm';
import { ClassDatasetRecordSchema, type ClassDatasetRecord } from '../../activities/store/records';
import type { Store } from '../../activities/store/types';
import { queuesFrom } from '../../activities/run-settings';
import { RunIdKey } from '../../workflows/search-attributes';
import { loadConfig, type Config } from '../../temporal.config';
import { CommandFailure } from './cli';
import { newRunId, resultThroughRestarts } from './crawl';
import { createEvalRun } from './eval-run';
import { runMemo } from './store-check';
import { startStack } from './stack';
import { loadLlmScript, startScriptedLlmServer } from '../scripted-llm/server';

export interface ClassEvalFlags {
  dataset: string;
  out: string;
  groundTruth: boolean;
  model?: string;
  baseUrl?: string;
  scripted?: string;
  n: number;
  temperature: number;
  ks: number[];
  repairRounds: number;
  limit?: number;
  timeoutSec: number;
  runId?: string;
  noWorkers?: boolean;
}

/** The records of a `classes-dataset.jsonl`; a bad line is an error naming it. */
export function readClassDataset(file: string): ClassDatasetRecord[] {
  if (!fs.existsSync(file)) throw new CommandFailure(`no dataset ${file}`);
  const out: ClassDatasetRecord[] = [];
  fs.readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch (err) {
        throw new CommandFailure(`${file} line ${i + 1}: not JSON (${(err as Error).message})`);
      }
      const parsed = ClassDatasetRecordSchema.safeParse(json);
      if (!parsed.success) throw new CommandFailure(`${file} line ${i + 1}: not a class environment record: ${parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`);
      out.push(parsed.data);
    });
  // A class's id names its result in the run: two records with one id would overwrite each other.
  const seen = new Set<string>();
  for (const r of out) {
    if (seen.has(r.class_id)) throw new CommandFailure(`${file}: two records have the class id ${JSON.stringify(r.class_id.slice(0, 80))}`);
    seen.add(r.class_id);
  }
  return out;
}

/** A class's item id: bounded and safe whatever the record's `class_id` holds. */
export const classItemId = (classId: string) => createHash('sha256').update(`class\0${classId}`).digest('hex').slice(0, 16);

export interface StartClassEvalOptions {
  config: Config;
  client: Client;
  store: Store;
  datasetFile: string;
  /** Raw settings (the evaluation's: n, temperature, ks, repairRounds, timeoutSec, model); validated here. */
  settings: Partial<EvalSettings>;
  groundTruth: boolean;
  outDir: string;
  limit?: number;
  runId?: string;
}

export interface ClassEvalRun {
  results: ClassEvalResult[];
  summary: ClassEvalSummary;
  outDir: string;
  runId: string;
}

/** Each record as an artifact, the items in pages (as the function evaluation stores them); returns the index's key. */
async function storeClassItems(store: Store, file: string, records: readonly ClassDatasetRecord[], settings: EvalSettings): Promise<string> {
  const pageSize = Math.min(100, settings.continueAsNewAfter);
  const pages: string[] = [];
  for (let start = 0; start < records.length; start += pageSize) {
    const items: EvalItem[] = [];
    for (const record of records.slice(start, start + pageSize)) {
      const stored: StoredClassRecord = { record };
      items.push({ functionId: classItemId(record.class_id), recordKey: await store.putJson(stored), repo: record.repo_name, qualname: record.class_name });
    }
    pages.push(await store.putJson(items));
  }
  const splits = { train: records.filter((r) => r.split === 'train').length, eval: records.filter((r) => r.split === 'eval').length, none: 0 };
  const index: EvalItemIndex = { dataset: { file: path.resolve(file), format: 'ours', functions: records.length, splits }, total: records.length, pages };
  return store.putJson(index);
}

/** Starts a class evaluation run (the dataset checked first: nothing starts on a bad one); `result()` waits for it and writes its two files. */
export async function startClassEval(options: StartClassEvalOptions): Promise<{ runId: string; settings: EvalSettings; classes: number; result(): Promise<ClassEvalRun> }> {
  const { config, client, store, groundTruth } = options;
  const records = readClassDataset(options.datasetFile).slice(0, options.limit ?? Infinity);
  if (records.length === 0) throw new CommandFailure(`${options.datasetFile} holds no class environment`);
  let parsed: EvalSettings;
  try {
    parsed = parseEvalSettings({ ...options.settings, task: 'eval', ...(groundTruth ? { n: 1, repairRounds: 0 } : {}) });
  } catch (err) {
    throw new CommandFailure(`class evaluation settings: ${(err as Error).message}`);
  }
  // The model is fixed when the run starts and travels with its settings.
  const settings: EvalSettings = { ...parsed, model: parsed.model ?? modelForStep(config, 'class_solve') };
  const runId = options.runId ?? newRunId('class-eval');
  const { run, itemsKey, pipeline } = await createEvalRun(store, config, {
    runId,
    targetKind: 'class',
    settings,
    outDir: path.resolve(options.outDir),
    storeItems: () => storeClassItems(store, options.datasetFile, records, settings),
    sources: records.length,
  });
  const queues = queuesFrom(config);
  const handle = await client.workflow.start('classEvalWorkflow', {
    workflowId: `${runId}/class-eval`,
    taskQueue: config.temporal.taskQueues.workflows,
    args: [{ run, itemsKey, settings, pipeline, queues, groundTruth }],
    typedSearchAttributes: [{ key: RunIdKey, value: runId }],
    memo: runMemo(run, queues),
  });
  return {
    runId,
    settings,
    classes: records.length,
    result: async () => {
      await resultThroughRestarts(handle);
      const { results, summary } = await exportClassEvalFiles(store, runId, options.outDir);
      return { results, summary, outDir: options.outDir, runId };
    },
  };
}

/** `eval.ts --classes`: the embedded stack (or an existing Temporal), an optional scripted LLM server, the run, its files. */
export async function runClassEval(flags: ClassEvalFlags, log: (line: string) => void = console.log): Promise<ClassEvalRun> {
  const cleanups: (() => Promise<void>)[] = [];
  try {
    let config = loadConfig(flags.baseUrl ? { overrides: { llm: { baseUrl: flags.baseUrl } } } : {});
    if (flags.scripted && !flags.groundTruth) {
      // Offline: answers from a scripted fixture, served over real HTTP to the gateway.
      const server = await startScriptedLlmServer(loadLlmScript(flags.scripted));
      cleanups.push(() => server.close());
      config = loadConfig({ overrides: { llm: { baseUrl: server.url, apiKey: 'scripted', model: 'scripted' } } });
      log(`scripted LLM server (${flags.scripted}) at ${server.url}`);
    }
    // A dataset that cannot be used is refused before anything starts.
    readClassDataset(flags.dataset);
    const stack = await startStack({ config, workers: !flags.noWorkers, log });
    cleanups.unshift(() => stack.close());
    const settings: Partial<EvalSettings> = {
      ...(flags.model ? { model: flags.model } : {}),
      n: flags.n,
      temperature: flags.temperature,
      ks: flags.ks,
      repairRounds: flags.repairRounds,
      timeoutSec: flags.timeoutSec,
    };
    const started = await startClassEval({ config, client: stack.client, store: stack.store, datasetFile: flags.dataset, settings, groundTruth: flags.groundTruth, outDir: flags.out, limit: flags.limit, runId: flags.runId });
    log(`run ${started.runId}: ${started.classes} class(es), ${flags.groundTruth ? 'the ground truth' : `model ${started.settings.model}, ${started.settings.n} sample(s) each, ${started.settings.repairRounds} repair round(s)`}`);
    const done = await started.result();
    for (const r of done.results) {
      if (r.samples.length === 0) {
        log(`${r.repo_name} ${r.class_path}::${r.class_name}: not evaluated (${r.error ?? 'no sample'})`);
        continue;
      }
      const best = r.samples.reduce((a, b) => (b.passRate > a.passRate ? b : a));
      log(`${r.repo_name} ${r.class_path}::${r.class_name}: ${r.samples.filter((x) => x.passed).length}/${r.samples.length} sample(s) pass every test; best ${best.passedTests}/${best.tests.length} tests`);
    }
    return done;
  } finally {
    for (const c of cleanups) await c();
  }
}
