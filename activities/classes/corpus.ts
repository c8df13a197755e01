/**
 * The class corpus: every non-test class that parses in each repository, one record a line in
 * `classes.jsonl` and a row in `classes.parquet`, with `classes-summary.json` (the distribution
 * of every metric, per documentation level too, the repositories read and those skipped) and,
 * when asked, a stratified seeded sample (`classes-sample.jsonl` / `.parquet`).
 *
 * Repositories are read one at a time (one parsed repository in memory) and records are written
 * as they come, into a staging folder whose files are moved into place once all are complete:
 * a corpus that fails half-way leaves the previous files in place, never a truncated one.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RepositoryAnalyzer, type AnalysisOptionsInput } from '../analysis';
import { ParquetSplitFile } from '../tables/parquet-file';
import { CLASS_COLUMNS, classRecord, type ClassRecord } from './record';
import { StratifiedSample } from './sample';
import type { CorpusSource } from './sources';
import { MetricsSummary } from './summary';

export const CORPUS_FILES = {
  records: 'classes.jsonl',
  parquet: 'classes.parquet',
  summary: 'classes-summary.json',
  sampleRecords: 'classes-sample.jsonl',
  sampleParquet: 'classes-sample.parquet',
} as const;

export interface CorpusOptions {
  outDir: string;
  /** Analysis settings (the run's or the configuration's): file size limit, ignored folders. */
  analysis?: AnalysisOptionsInput;
  /** Classes per documentation level in the sample; 0 or absent: no sample. */
  perLevel?: number;
  seed?: number;
  log?: (line: string) => void;
}

export interface CorpusRepositorySummary {
  repository: string;
  commit: string;
  license: string | null;
  split: string;
  files: number;
  skippedFiles: number;
  classes: number;
}

export interface CorpusResult {
  outDir: string;
  files: string[];
  classes: number;
  repositories: CorpusRepositorySummary[];
  skipped: { source: string; reason: string }[];
  sample: Record<string, number> | null;
}

/** A JSONL file written a line at a time. */
class JsonLinesFile {
  private readonly fd: number;

  constructor(readonly file: string) {
    this.fd = fs.openSync(file, 'w');
  }

  add(record: unknown): void {
    fs.writeSync(this.fd, `${JSON.stringify(record)}\n`);
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

export async function writeClassCorpus(sources: AsyncIterable<CorpusSource> | Iterable<CorpusSource>, options: CorpusOptions): Promise<CorpusResult> {
  const outDir = path.resolve(options.outDir);
  fs.mkdirSync(outDir, { recursive: true });
  const log = options.log ?? (() => undefined);
  const perLevel = options.perLevel ?? 0;
  const seed = options.seed ?? 0;
  // Everything is written in a staging folder and moved into place once complete.
  const staging = fs.mkdtempSync(path.join(outDir, '.classes-'));
  const at = (name: string) => path.join(staging, name);
  const summary = new MetricsSummary();
  const sample = new StratifiedSample(perLevel, seed);
  const repositories: CorpusRepositorySummary[] = [];
  const skipped: { source: string; reason: string }[] = [];
  try {
    const jsonl = new JsonLinesFile(at(CORPUS_FILES.records));
    const parquet = new ParquetSplitFile<ClassRecord>(at(CORPUS_FILES.parquet), CLASS_COLUMNS);
    try {
      for await (const source of sources) {
        if (!source.ok) {
          skipped.push({ source: source.source, reason: source.reason });
          log(`skipped ${source.source}: ${source.reason}`);
          continue;
        }
        const { repo } = source;
        const started = Date.now();
        let analyzer: RepositoryAnalyzer;
        try {
          analyzer = await RepositoryAnalyzer.open(repo.dir, { ...options.analysis, repoId: repo.repoId, commit: repo.commit });
        } catch (err) {
          skipped.push({ source: `${repo.repoId}@${repo.commit}`, reason: `cannot read it: ${(err as Error).message}` });
          log(`skipped ${repo.repoId}@${repo.commit}: ${(err as Error).message}`);
          continue;
        }
        const classes = analyzer.classes();
        for (const c of classes) {
          const record = classRecord(repo, c, analyzer.repo.modules.get(c.path)!.lines);
          jsonl.add(record);
          await parquet.add(record);
          summary.add(record);
          sample.offer(record);
        }
        repositories.push({ repository: repo.repoId, commit: repo.commit, license: repo.license, split: repo.split, files: analyzer.repo.modules.size, skippedFiles: analyzer.skipped.length, classes: classes.length });
        log(`${repo.repoId}@${repo.commit.slice(0, 12)}: ${classes.length} classes from ${analyzer.repo.modules.size} files (${analyzer.skipped.length} skipped) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
    } finally {
      jsonl.close();
    }
    await parquet.close();
    const files: string[] = [CORPUS_FILES.records, CORPUS_FILES.parquet];
    if (perLevel > 0) {
      const sampleJsonl = new JsonLinesFile(at(CORPUS_FILES.sampleRecords));
      const sampleParquet = new ParquetSplitFile<ClassRecord>(at(CORPUS_FILES.sampleParquet), CLASS_COLUMNS);
      for (const r of sample.records()) {
        sampleJsonl.add(r);
        await sampleParquet.add(r);
      }
      sampleJsonl.close();
      await sampleParquet.close();
      files.push(CORPUS_FILES.sampleRecords, CORPUS_FILES.sampleParquet);
    }
    const sampleCounts = perLevel > 0 ? sample.counts() : null;
    const document = { ...summary.result(), repositories, skipped, sample: sampleCounts ? { perLevel, seed, classes: sampleCounts } : null, definitions: 'activities/analysis/README.md (Classes)' };
    fs.writeFileSync(at(CORPUS_FILES.summary), `${JSON.stringify(document, null, 2)}\n`);
    files.push(CORPUS_FILES.summary);
    for (const f of files) fs.renameSync(at(f), path.join(outDir, f));
    // An earlier corpus's sample goes when this one has none: the folder holds one corpus.
    if (perLevel === 0) for (const f of [CORPUS_FILES.sampleRecords, CORPUS_FILES.sampleParquet]) fs.rmSync(path.join(outDir, f), { force: true });
    return { outDir, files, classes: summary.classes, repositories, skipped, sample: sampleCounts };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}
