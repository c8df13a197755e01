/**
 * Exports a run's accepted records as a folder the Hugging Face `datasets` library and Hub take
 * as it is: `data/<split>-00000-of-00001.parquet` per split and a `README.md` dataset card.
 *
 * The folder is built beside the target and swapped in when complete, so an export that fails
 * half-way leaves the previous export (or nothing) in place, never a mix. An existing target is
 * replaced only when it looks like an export (a README.md and a data/ folder, nothing else).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { writeFileAtomic } from '../artifacts/store';
import { SPLITS, licenseOf, type DatasetSplit } from '../dataset/product-record';
import type { RunReader } from '../dataset/run-reader';
import { StatisticsBuilder } from '../dataset/statistics';
import { renderDatasetCard, type CardSplit } from './dataset-card';
import { ParquetSplitFile } from './parquet-file';

export const CARD_FILE = 'README.md';
export const DATA_DIR = 'data';

export class ExportError extends Error {
  override name = 'ExportError';
}

export interface ExportResult {
  dir: string;
  card: string;
  splits: CardSplit[];
}

export function splitFileName(split: DatasetSplit): string {
  return `${DATA_DIR}/${split}-00000-of-00001.parquet`;
}

function checkTarget(dir: string): void {
  if (!fs.existsSync(dir)) return;
  if (!fs.statSync(dir).isDirectory()) throw new ExportError(`${dir} exists and is not a folder`);
  const entries = fs.readdirSync(dir);
  const isExport = entries.every((e) => e === CARD_FILE || e === DATA_DIR || e.startsWith('.'));
  if (entries.length > 0 && !isExport) throw new ExportError(`${dir} is not empty and is not an earlier export (it holds ${entries.slice(0, 5).join(', ')}${entries.length > 5 ? ', ...' : ''}); choose another --to`);
}

export async function exportRun(reader: RunReader, toDir: string, now = new Date()): Promise<ExportResult> {
  const dir = path.resolve(toDir);
  checkTarget(dir);
  const staging = `${dir}.export-${process.pid}-${randomBytes(3).toString('hex')}`;
  const files = new Map<DatasetSplit, ParquetSplitFile>();
  const thresholds = new Map<DatasetSplit, { coverage: Set<number>; ast: Set<boolean> }>();
  const repositories = new Map<string, { license: string; licenseSource: string; records: number }>();
  const prompts = new Map<string, { step: string; version: string; records: number }>();
  const builder = new StatisticsBuilder();
  try {
    for await (const record of reader.records()) {
      let file = files.get(record.split);
      if (!file) {
        file = new ParquetSplitFile(path.join(staging, splitFileName(record.split)));
        files.set(record.split, file);
        thresholds.set(record.split, { coverage: new Set(), ast: new Set() });
      }
      await file.add(record);
      builder.add(record);
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
    if (files.size === 0) throw new ExportError(`nothing to export: run ${reader.runId} has no accepted records (${reader.location})`);
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
      splits,
      repositories: [...repositories].map(([repo, r]) => ({ repo, ...r })).sort((a, b) => a.repo.localeCompare(b.repo)),
      promptVersions: [...prompts.values()].sort((a, b) => a.step.localeCompare(b.step) || a.version.localeCompare(b.version)),
      exportedAt: now.toISOString(),
    });
    await writeFileAtomic(path.join(staging, CARD_FILE), card);
    // Swap the finished folder in; the earlier export goes only once the new one is in place.
    const old = fs.existsSync(dir) ? `${staging}.old` : null;
    if (old) fs.renameSync(dir, old);
    fs.renameSync(staging, dir);
    if (old) fs.rmSync(old, { recursive: true, force: true });
    return { dir, card: path.join(dir, CARD_FILE), splits };
  } catch (err) {
    for (const f of files.values()) f.abort();
    fs.rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}
