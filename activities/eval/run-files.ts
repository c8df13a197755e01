/**
 * The files of an evaluation run. Each function's line is written once to
 * `<outDir>/functions/<functionId>.json` when the function ends (atomically; a re-run or replay
 * overwrites its own file, never duplicates it); the run's files are assembled from those:
 * `eval.jsonl`, `eval-summary.json`, `eval-report.html`, and per task `sft.jsonl` (training
 * data) or `dataset.augmented.jsonl` (augmented evaluation scripts).
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { writeFileAtomic } from '../artifacts/store';
import type { EvalItem } from './contracts';
import type { EvalRecord } from './dataset';
import { EvalLineSchema, type EvalLine } from './results';

/** What the record artifact of an item holds: the normalised record and the dataset line as read. */
export interface StoredEvalRecord {
  record: EvalRecord;
  raw: Record<string, unknown>;
}

export function evalPaths(outDir: string) {
  return {
    functions: path.join(outDir, 'functions'),
    lines: path.join(outDir, 'eval.jsonl'),
    summary: path.join(outDir, 'eval-summary.json'),
    report: path.join(outDir, 'eval-report.html'),
    sft: path.join(outDir, 'sft.jsonl'),
    augmented: path.join(outDir, 'dataset.augmented.jsonl'),
    run: path.join(outDir, 'eval-run.json'),
  };
}

export async function writeFunctionLine(outDir: string, line: EvalLine): Promise<void> {
  await writeFileAtomic(path.join(evalPaths(outDir).functions, `${line.function_id}.json`), JSON.stringify(EvalLineSchema.parse(line)));
}

/** The lines of the given items, in the items' order; items without a line are reported missing. */
export async function readFunctionLines(outDir: string, items: readonly EvalItem[]): Promise<{ lines: EvalLine[]; missing: string[] }> {
  const lines: EvalLine[] = [];
  const missing: string[] = [];
  for (const item of items) {
    const file = path.join(evalPaths(outDir).functions, `${item.functionId}.json`);
    if (!fs.existsSync(file)) {
      missing.push(item.functionId);
      continue;
    }
    lines.push(EvalLineSchema.parse(JSON.parse(await fsp.readFile(file, 'utf8'))));
  }
  return { lines, missing };
}

export function jsonl(values: readonly unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join('\n') + (values.length ? '\n' : '');
}

export async function writeRunFile(file: string, content: string): Promise<void> {
  await writeFileAtomic(file, content);
}

/** Reads an `eval.jsonl` written by an earlier run (the report command reads several). */
export function parseEvalLines(text: string): EvalLine[] {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => EvalLineSchema.parse(JSON.parse(l)));
}
