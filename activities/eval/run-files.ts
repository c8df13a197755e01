/**
 * The files of an evaluation run, exported from the store by whoever launched it (on the
 * launcher's machine: workers never write run files) once the run has finalized:
 *
 *   eval.jsonl               one line per function, in function id order, streamed page by page
 *   eval-summary.json        the summary the run finalized with (kept in its manifest)
 *   eval-report.html         the summary drawn as one self-contained page
 *   eval-run.json            the run's manifest and frozen settings
 *   sft.jsonl                (training data) the chat-format SFT examples
 *   dataset.augmented.jsonl  (augmentation) the dataset's lines, augmented scripts in place
 *
 * Safe to call again: each file is replaced atomically.
 */
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { JsonLinesWriter, writeFileAtomic } from '../dataset/records';
import { allEvalResults, requireEvalRun, type Store } from '../store/types';
import type { ClassEvalResult, ClassEvalSummary } from './class-eval';
import type { EvalItem, EvalItemIndex } from './contracts';
import type { StoredEvalRecord } from './dataset';
import { storedLines } from './finalize';
import { renderEvalReport } from './report';
import { EvalLineSchema, type EvalLine } from './results';
import { frozenEvalSettings } from './settings';
import { SftExampleSchema } from './sft';
import type { EvalSummary } from './summary';

export function evalPaths(outDir: string) {
  return {
    lines: path.join(outDir, 'eval.jsonl'),
    summary: path.join(outDir, 'eval-summary.json'),
    report: path.join(outDir, 'eval-report.html'),
    run: path.join(outDir, 'eval-run.json'),
    sft: path.join(outDir, 'sft.jsonl'),
    augmented: path.join(outDir, 'dataset.augmented.jsonl'),
  };
}

export interface ExportedEvalRun {
  summary: EvalSummary;
  files: string[];
}

/** Writes lines through a stream; on failure nothing half-written is left behind. */
async function writeLines(file: string, rows: AsyncIterable<unknown>): Promise<void> {
  const out = new JsonLinesWriter(file);
  try {
    for await (const row of rows) await out.write(row);
    await out.close();
  } catch (err) {
    await out.abort();
    throw err;
  }
}

/** The run's items in dataset order, a page at a time. */
async function* itemsOf(store: Store, index: EvalItemIndex): AsyncIterable<EvalItem> {
  for (const key of index.pages) yield* await store.getJson<EvalItem[]>(key);
}

export async function exportEvalFiles(store: Store, runId: string, outDir: string): Promise<ExportedEvalRun> {
  const run = await store.getRun(runId);
  if (!run) throw new Error(`no run ${runId} in the store at ${store.location}`);
  requireEvalRun(run, 'function', () => 'its files are class-eval.jsonl, class-eval-summary.json and class-eval-run.json (exportClassEvalFiles, eval.ts --classes)');
  if (run.status !== 'finished' || !run.summary) throw new Error(`run ${runId} has not finished: its files are written once it has`);
  const summary = run.summary as EvalSummary;
  const frozen = await store.getJson(run.settingsKey);
  const settings = frozenEvalSettings(frozen, runId);
  const p = evalPaths(path.resolve(outDir));
  const files = [p.lines, p.summary, p.report, p.run];

  // Small facts per function that the task's own file needs after the lines have streamed past.
  const augmentedScripts = new Map<string, { scriptKey: string; kept: number }>();
  const examplesKeys: string[] = [];
  async function* lines(): AsyncIterable<EvalLine> {
    for await (const line of storedLines(store, runId)) {
      if (line.training?.examplesKey) examplesKeys.push(line.training.examplesKey);
      if (line.augmentation?.scriptKey) augmentedScripts.set(line.function_id, { scriptKey: line.augmentation.scriptKey, kept: line.augmentation.kept });
      yield line;
    }
  }
  await writeLines(p.lines, lines());
  await writeFileAtomic(p.summary, `${JSON.stringify(summary, null, 2)}\n`);
  await writeFileAtomic(p.report, renderEvalReport([summary], { title: `Evaluation report: ${runId}` }));
  await writeFileAtomic(p.run, `${JSON.stringify({ ...run, summary: undefined, settings: frozen }, null, 2)}\n`);

  if (settings.task === 'rft') {
    async function* examples(): AsyncIterable<unknown> {
      for (const key of examplesKeys) for (const e of await store.getJson<unknown[]>(key)) yield SftExampleSchema.parse(e);
    }
    await writeLines(p.sft, examples());
    files.push(p.sft);
  }
  if (settings.task === 'augment' && run.sourcesKey) {
    const index = await store.getJson<EvalItemIndex>(run.sourcesKey);
    async function* augmented(): AsyncIterable<unknown> {
      for await (const item of itemsOf(store, index)) {
        const { raw } = await store.getJson<StoredEvalRecord>(item.recordKey);
        const done = augmentedScripts.get(item.functionId);
        yield done ? { ...raw, eval_script: await store.get(done.scriptKey), augmented_inputs: done.kept } : { ...raw, augmented_inputs: 0 };
      }
    }
    await writeLines(p.augmented, augmented());
    files.push(p.augmented);
  }
  return { summary, files };
}

/** The files of a class evaluation run (`eval.ts --classes`). */
export function classEvalPaths(outDir: string) {
  return {
    lines: path.join(outDir, 'class-eval.jsonl'),
    summary: path.join(outDir, 'class-eval-summary.json'),
    run: path.join(outDir, 'class-eval-run.json'),
  };
}

export interface ExportedClassEvalRun {
  /** A line per class, in the dataset's order (a class the run has no result for is left out). */
  results: ClassEvalResult[];
  summary: ClassEvalSummary;
  files: string[];
}

/**
 * Writes a finished class evaluation run's files from the store: `class-eval.jsonl` (a line per
 * class in the dataset's order), `class-eval-summary.json` (the summary the run finalized with) and
 * `class-eval-run.json` (its manifest and frozen settings). Any other run is refused with what it is.
 */
export async function exportClassEvalFiles(store: Store, runId: string, outDir: string): Promise<ExportedClassEvalRun> {
  const run = await store.getRun(runId);
  if (!run) throw new Error(`no run ${runId} in the store at ${store.location}`);
  requireEvalRun(run, 'class', () => 'its files are eval.jsonl, eval-summary.json, eval-report.html and eval-run.json (exportEvalFiles, eval.ts)');
  if (run.status !== 'finished' || !run.summary) throw new Error(`run ${runId} has not finished: its files are written once it has`);
  if (!run.sourcesKey) throw new Error(`run ${runId} has no items: it was not started as an evaluation`);
  const summary = run.summary as ClassEvalSummary;
  const byId = new Map<string, ClassEvalResult>();
  for await (const entry of allEvalResults(store, runId)) byId.set(entry.functionId, entry.result as ClassEvalResult);
  const results: ClassEvalResult[] = [];
  for await (const item of itemsOf(store, await store.getJson<EvalItemIndex>(run.sourcesKey))) {
    const result = byId.get(item.functionId);
    if (result) results.push(result);
  }
  const p = classEvalPaths(path.resolve(outDir));
  await fsp.mkdir(path.dirname(p.lines), { recursive: true });
  await writeFileAtomic(p.lines, results.map((r) => JSON.stringify(r)).join('\n') + '\n');
  await writeFileAtomic(p.summary, JSON.stringify(summary, null, 2) + '\n');
  await writeFileAtomic(p.run, `${JSON.stringify({ ...run, summary: undefined, settings: await store.getJson(run.settingsKey) }, null, 2)}\n`);
  return { results, summary, files: [p.lines, p.summary, p.run] };
}

/** Reads an exported `eval.jsonl` (tests, or a report over runs copied from elsewhere). */
export function parseEvalLines(text: string): EvalLine[] {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => EvalLineSchema.parse(JSON.parse(l)));
}
