/**
 * Keeping evaluation and training apart. RepoST splits by repository (creation date), so the
 * unit is the repository: every evaluation run registers its dataset's repositories as `eval`,
 * every training-data run as `train`, in `<dataDir>/splits.jsonl`; a run refuses a dataset
 * holding a repository registered for the other split, and training data refuses a dataset
 * declared an evaluation set (`"split": "eval"` on its records or in the run.json beside it).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';

export type SplitUse = 'train' | 'eval';

export const SplitEntrySchema = z.object({
  split: z.enum(['train', 'eval']),
  runId: z.string(),
  dataset: z.string(),
  repositories: z.array(z.string()),
  registeredAt: z.string(),
});
export type SplitEntry = z.infer<typeof SplitEntrySchema>;

export function splitRegistryFile(dataDir: string): string {
  return path.join(dataDir, 'splits.jsonl');
}

export function readSplitRegistry(dataDir: string): SplitEntry[] {
  const file = splitRegistryFile(dataDir);
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      const parsed = SplitEntrySchema.safeParse(JSON.parse(l));
      if (!parsed.success) throw new Error(`${file} line ${i + 1}: not a split entry`);
      return parsed.data;
    });
}

/** Appends one entry (one line, one write: concurrent runs do not interleave partial lines). */
export function registerSplit(dataDir: string, entry: SplitEntry): void {
  fs.mkdirSync(dataDir, { recursive: true });
  fs.appendFileSync(splitRegistryFile(dataDir), `${JSON.stringify(SplitEntrySchema.parse(entry))}\n`);
}

export interface SplitConflict {
  repository: string;
  registeredAs: SplitUse;
  runId: string;
  dataset: string;
}

/** Repositories of the dataset already used for the other split. */
export function splitConflicts(repositories: Iterable<string>, use: SplitUse, registry: readonly SplitEntry[]): SplitConflict[] {
  const other = registry.filter((e) => e.split !== use);
  const out: SplitConflict[] = [];
  for (const repo of new Set(repositories)) {
    const hit = other.find((e) => e.repositories.includes(repo));
    if (hit) out.push({ repository: repo, registeredAs: hit.split, runId: hit.runId, dataset: hit.dataset });
  }
  return out;
}

/** The split a dataset declares: on its records, or in the run.json of the crawl that wrote it. */
export function declaredSplit(datasetFile: string, rawLines: readonly Record<string, unknown>[]): SplitUse | null {
  const onRecords = new Set(rawLines.map((l) => l.split).filter((s): s is SplitUse => s === 'train' || s === 'eval'));
  if (onRecords.has('eval')) return 'eval';
  if (onRecords.has('train')) return 'train';
  const runJson = path.join(path.dirname(datasetFile), 'run.json');
  if (fs.existsSync(runJson)) {
    try {
      const split = (JSON.parse(fs.readFileSync(runJson, 'utf8')) as { split?: unknown }).split;
      if (split === 'train' || split === 'eval') return split;
    } catch {
      // An unreadable run.json declares nothing.
    }
  }
  return null;
}
