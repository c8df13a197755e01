/**
 * Writing a function's result line, and assembling the run's files from the lines when the run
 * ends: eval.jsonl, eval-summary.json, eval-report.html, and for training data sft.jsonl, for
 * augmentation dataset.augmented.jsonl. Idempotent: finalizing twice writes the same files.
 */
import type { ArtifactStore } from '../artifacts/store';
import type { EvalItem, EvalRunRef, EvalRunSummary, FunctionEvalResult } from './contracts';
import type { DatasetFormat } from './dataset';
import { renderEvalReport } from './report';
import { evalLineOf } from './results';
import { evalPaths, jsonl, readFunctionLines, writeFunctionLine, writeRunFile, type StoredEvalRecord } from './run-files';
import type { EvalSettings } from './settings';
import { SftExampleSchema } from './sft';
import { summarize, type EvalSummary } from './summary';

/** The few numbers a run returns to its caller (the rest is in eval-summary.json). */
export function headlineOf(summary: EvalSummary): Record<string, number | null> {
  const rounds = summary.passAtKByRound;
  return { ...summary.passAtK, ...(rounds.length > 1 ? { 'final pass@1': rounds[rounds.length - 1]!['pass@1'] ?? null } : {}) };
}

export interface StoredCandidate {
  code: string;
  preamble: string;
  bare: boolean;
}

export async function writeFunctionResult(store: ArtifactStore, input: { run: EvalRunRef; item: EvalItem; settings: EvalSettings; result: FunctionEvalResult }): Promise<void> {
  const { record } = await store.getJson<StoredEvalRecord>(input.item.recordKey);
  const keys = new Set(input.result.samples.flatMap((s) => s.rounds.map((r) => r.candidateKey).filter((k): k is string => k !== null)));
  const candidates = new Map<string, { code: string; bare: boolean }>();
  for (const key of keys) {
    const c = await store.getJson<StoredCandidate>(key);
    candidates.set(key, { code: c.code, bare: c.bare });
  }
  const line = evalLineOf(input.result, { record, settings: input.settings, model: input.settings.model ?? 'default', candidates });
  await writeFunctionLine(input.run.outDir, line);
}

export interface DatasetMeta {
  file: string;
  format: DatasetFormat | 'mixed';
  functions: number;
}

export async function finalizeEvalRun(
  store: ArtifactStore,
  input: { run: EvalRunRef; settings: EvalSettings; itemsKey: string; dataset: DatasetMeta },
): Promise<EvalRunSummary> {
  const { run, settings } = input;
  const items = await store.getJson<EvalItem[]>(input.itemsKey);
  const { lines, missing } = await readFunctionLines(run.outDir, items);
  if (missing.length > 0) throw new Error(`${missing.length} function(s) have no result yet (first: ${missing[0]}); the run is not complete`);
  const paths = evalPaths(run.outDir);
  const summary = summarize(lines, {
    runId: run.runId,
    model: settings.model ?? 'default',
    settings,
    datasetFile: input.dataset.file,
    datasetFormat: input.dataset.format,
    datasetFunctions: input.dataset.functions,
  });
  await writeRunFile(paths.lines, jsonl(lines));
  await writeRunFile(paths.summary, `${JSON.stringify(summary, null, 2)}\n`);
  await writeRunFile(paths.report, renderEvalReport([summary], { title: `Evaluation report: ${run.runId}` }));

  if (settings.task === 'rft') {
    const examples: unknown[] = [];
    for (const l of lines) {
      if (l.training?.examplesKey) examples.push(...(await store.getJson<unknown[]>(l.training.examplesKey)).map((e) => SftExampleSchema.parse(e)));
    }
    await writeRunFile(paths.sft, jsonl(examples));
  }
  if (settings.task === 'augment') {
    const out: unknown[] = [];
    for (const item of items) {
      const { raw } = await store.getJson<StoredEvalRecord>(item.recordKey);
      const l = lines.find((x) => x.function_id === item.functionId);
      const key = l?.augmentation?.scriptKey;
      out.push(key ? { ...raw, eval_script: await store.get(key), augmented_inputs: l!.augmentation!.kept } : { ...raw, augmented_inputs: 0 });
    }
    await writeRunFile(paths.augmented, jsonl(out));
  }
  return {
    runId: run.runId,
    outDir: run.outDir,
    functions: lines.length,
    errors: summary.errors.length,
    headline: headlineOf(summary),
  };
}
