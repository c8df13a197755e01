/**
 * Exports a run's accepted records as a folder the Hugging Face `datasets` library and Hub take
 * as it is: `data/<split>-00000-of-00001.parquet` per split and a `README.md` dataset card.
 *
 * The folder is built beside the target and swapped in when complete, so an export that fails
 * half-way leaves the previous export (or nothing) in place, never a mix. An existing target is
 * replaced only when the exporter's own marker (`.repost-export.json`, written into every export)
 * proves it an earlier export and it holds nothing but what an export holds; anything else (a
 * clone of a dataset repository with its `.git`, a folder that merely looks like an export) is
 * refused and left as it is.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { writeFileAtomic } from '../store/artifacts';
import { SPLITS, licenseOf, type DatasetSplit, type ProductRecord } from '../dataset/product-record';
import type { RunReader } from '../dataset/run-reader';
import { SolvabilityFiguresBuilder } from '../dataset/solvability-figures';
import { StatisticsBuilder } from '../dataset/statistics';
import { TestStrengthBuilder } from '../dataset/test-strength';
import { renderDatasetCard, type CardSplit } from './dataset-card';
import { ParquetSplitFile } from '../tables/parquet-file';
import { CLASS_ENVIRONMENT_COLUMNS } from './class-columns';
import { EXPORT_COLUMNS } from './columns';
import type { ClassDatasetRecord } from '../store/records';

export const CARD_FILE = 'README.md';
export const DATA_DIR = 'data';
/** Written into every export: proof that a folder is one, so a later export may replace it. */
export const EXPORT_MARKER = '.repost-export.json';
const MARKER_EXPORTER = 'repost-factory';

export class ExportError extends Error {
  override name = 'ExportError';
}

export interface ExportResult {
  dir: string;
  card: string;
  splits: CardSplit[];
  /** The class environments' splits, when the run made any. */
  classSplits?: CardSplit[];
}

export function splitFileName(split: DatasetSplit): string {
  return `${DATA_DIR}/${split}-00000-of-00001.parquet`;
}

/** A split of the class environments (the `classes` configuration). */
export function classSplitFileName(split: DatasetSplit): string {
  return `${DATA_DIR}/classes/${split}-00000-of-00001.parquet`;
}

/** Whether `dir` holds the exporter's marker: a regular file (not a link) naming the exporter. */
function hasMarker(dir: string): boolean {
  const file = path.join(dir, EXPORT_MARKER);
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (!st?.isFile() || st.size > 4096) return false;
  try {
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { exporter?: unknown }).exporter === MARKER_EXPORTER;
  } catch {
    return false;
  }
}

/** A target is new, an empty folder, or an earlier export (its marker, a card, data/, nothing else). */
function checkTarget(dir: string): void {
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (!st) return;
  if (!st.isDirectory()) throw new ExportError(`${dir} exists and is not a folder`);
  const entries = fs.readdirSync(dir);
  if (entries.length === 0) return;
  const held = `it holds ${entries.slice(0, 5).join(', ')}${entries.length > 5 ? ', ...' : ''}`;
  if (!hasMarker(dir)) throw new ExportError(`${dir} is not empty and is not an earlier export (no ${EXPORT_MARKER}; ${held}); nothing was changed: choose another --out`);
  const extra = entries.filter((e) => e !== CARD_FILE && e !== DATA_DIR && e !== EXPORT_MARKER);
  if (extra.length > 0) throw new ExportError(`${dir} is an earlier export that now holds other files too (${extra.slice(0, 5).join(', ')}${extra.length > 5 ? ', ...' : ''}); nothing was changed: move them, or choose another --out`);
}

export async function exportRun(reader: RunReader, toDir: string, now = new Date()): Promise<ExportResult> {
  const dir = path.resolve(toDir);
  checkTarget(dir);
  const staging = `${dir}.export-${process.pid}-${randomBytes(3).toString('hex')}`;
  const files = new Map<DatasetSplit, ParquetSplitFile<ProductRecord>>();
  const thresholds = new Map<DatasetSplit, { coverage: Set<number>; ast: Set<boolean> }>();
  const repositories = new Map<string, { license: string; licenseSource: string; records: number }>();
  const prompts = new Map<string, { step: string; version: string; records: number }>();
  const builder = new StatisticsBuilder();
  const strength = new TestStrengthBuilder();
  const abortClasses: (() => void)[] = [];
  const solvability = new SolvabilityFiguresBuilder();
  try {
    for await (const record of reader.records()) {
      let file = files.get(record.split);
      if (!file) {
        file = new ParquetSplitFile<ProductRecord>(path.join(staging, splitFileName(record.split)), EXPORT_COLUMNS);
        files.set(record.split, file);
        thresholds.set(record.split, { coverage: new Set(), ast: new Set() });
      }
      await file.add(record);
      builder.add(record);
      strength.add(record);
      solvability.add(record);
      const t = thresholds.get(record.split)!;
      if (record.coverage_threshold !== null && record.coverage_threshold !== undefined) t.coverage.add(record.coverage_threshold);
      if (record.ast_check_required !== null && record.ast_check_required !== undefined) t.ast.add(record.ast_check_required);
      const repo = repositories.get(record.repo_name) ?? { license: licenseOf(record), licenseSource: record.license_source ?? 'not recorded', records: 0 };
      repo.records++;
      repositories.set(record.repo_name, repo);
      for (const [step, version] of Object.entries(record.prompt_versions)) {
        const key = `${step}\u0000${version}`;
        const seen = prompts.get(key) ?? { step, version, records: 0 };
        seen.records++;
        prompts.set(key, seen);
      }
    }
    // The class environments, their own configuration with their own splits.
    const classFiles = new Map<DatasetSplit, ParquetSplitFile<ClassDatasetRecord>>();
    const classThresholds = new Map<DatasetSplit, { coverage: Set<number>; ast: Set<boolean> }>();
    for await (const record of reader.classRecords()) {
      let file = classFiles.get(record.split);
      if (!file) {
        file = new ParquetSplitFile<ClassDatasetRecord>(path.join(staging, classSplitFileName(record.split)), CLASS_ENVIRONMENT_COLUMNS);
        classFiles.set(record.split, file);
        classThresholds.set(record.split, { coverage: new Set(), ast: new Set() });
        abortClasses.push(() => file!.abort());
      }
      await file.add(record);
      classThresholds.get(record.split)!.coverage.add(record.coverage_threshold);
      classThresholds.get(record.split)!.ast.add(record.ast_check_required);
      const repo = repositories.get(record.repo_name) ?? { license: record.license ?? 'unknown', licenseSource: record.license_source ?? 'not recorded', records: 0 };
      repo.records++;
      repositories.set(record.repo_name, repo);
    }
    if (files.size === 0 && classFiles.size === 0) throw new ExportError(`nothing to export: run ${reader.runId} has no accepted records (${reader.location})`);
    const classSplits: CardSplit[] = [];
    for (const split of SPLITS) {
      const file = classFiles.get(split);
      if (!file) continue;
      await file.close();
      const t = classThresholds.get(split)!;
      classSplits.push({ name: split, path: classSplitFileName(split), rows: file.rows, coverageThresholds: [...t.coverage].sort((a, b) => a - b), astCheckRequired: [...t.ast].sort() });
    }
    const splits: CardSplit[] = [];
    for (const split of SPLITS) {
      const file = files.get(split);
      if (!file) continue;
      await file.close();
      const t = thresholds.get(split)!;
      splits.push({ name: split, path: splitFileName(split), rows: file.rows, coverageThresholds: [...t.coverage].sort((a, b) => a - b), astCheckRequired: [...t.ast].sort() });
    }
    const [info, summary] = await Promise.all([reader.info(), reader.summary()]);
    const card = renderDatasetCard({
      runId: reader.runId,
      info,
      summary,
      statistics: builder.result(summary.llm?.total ?? null),
      testStrength: strength.result(),
      splits,
      repositories: [...repositories].map(([repo, r]) => ({ repo, ...r })).sort((a, b) => a.repo.localeCompare(b.repo)),
      promptVersions: [...prompts.values()].sort((a, b) => a.step.localeCompare(b.step) || a.version.localeCompare(b.version)),
      solvability: solvability.result(summary.rejectedAt.solvability ?? 0),
      exportedAt: now.toISOString(),
      ...(classSplits.length ? { classSplits } : {}),
    });
    await writeFileAtomic(path.join(staging, CARD_FILE), card);
    await writeFileAtomic(path.join(staging, EXPORT_MARKER), JSON.stringify({ exporter: MARKER_EXPORTER, runId: reader.runId, exportedAt: now.toISOString() }, null, 2) + '\n');
    // Swap the finished folder in; the earlier export goes only once the new one is in place.
    const old = fs.existsSync(dir) ? `${staging}.old` : null;
    if (old) fs.renameSync(dir, old);
    fs.renameSync(staging, dir);
    if (old) fs.rmSync(old, { recursive: true, force: true });
    return { dir, card: path.join(dir, CARD_FILE), splits, ...(classSplits.length ? { classSplits } : {}) };
  } catch (err) {
    for (const f of files.values()) f.abort();
    for (const abort of abortClasses) abort();
    fs.rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}
