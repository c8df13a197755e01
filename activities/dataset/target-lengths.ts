/**
 * How long the target functions are, beside RepoST's: the distribution of target lines (physical
 * lines of `orig_func`, as Table 4 counts them) over fixed bins, per split, next to the same
 * distribution of RepoST's published evaluation set and the paper's averages.
 */
import type { DatasetSplit } from './product-record';

/** Bins of target lines, inclusive bounds. */
export const TARGET_LINE_BINS: readonly { label: string; lo: number; hi: number }[] = [
  { label: '1-5', lo: 1, hi: 5 },
  { label: '6-10', lo: 6, hi: 10 },
  { label: '11-15', lo: 11, hi: 15 },
  { label: '16-20', lo: 16, hi: 20 },
  { label: '21-25', lo: 21, hi: 25 },
  { label: '26-30', lo: 26, hi: 30 },
  { label: '31-40', lo: 31, hi: 40 },
  { label: '41-60', lo: 41, hi: 60 },
  { label: '61+', lo: 61, hi: Infinity },
];

/** The bin index of a target of `lines` lines. */
export function targetLineBin(lines: number): number {
  const i = TARGET_LINE_BINS.findIndex((b) => lines >= b.lo && lines <= b.hi);
  return i < 0 ? 0 : i;
}

/**
 * RepoST's published evaluation set (data/ExecEval/checked_test_set_final.json, 296 records),
 * measured as this factory measures a record: records per bin of TARGET_LINE_BINS. Average 10.39
 * lines (the paper reports 9.9 for the same set).
 */
export const REPOST_EVAL_TARGET_LINES = { records: 296, average: 10.389, bins: [91, 94, 56, 30, 12, 7, 5, 1, 0] } as const;

/** The paper's average target lines (Table 4). The training set is not published whole; its average is. */
export const REPOST_PAPER_AVG_TARGET_LINES: Record<DatasetSplit, number> = { train: 12.8, eval: 9.9 };

export interface TargetLengths {
  bins: string[];
  /** Records per bin, per split of this run (only splits with records). */
  splits: Partial<Record<DatasetSplit, number[]>>;
  /** The same for RepoST's published evaluation set. */
  repostEval: { records: number; average: number; bins: number[] };
  /** The paper's averages per split. */
  paperAverage: Record<DatasetSplit, number>;
}

/** Counts target lengths one record at a time. */
export class TargetLengthCounter {
  private readonly bySplit = new Map<DatasetSplit, number[]>();

  add(split: DatasetSplit, lines: number): void {
    const counts = this.bySplit.get(split) ?? TARGET_LINE_BINS.map(() => 0);
    counts[targetLineBin(lines)]! += 1;
    this.bySplit.set(split, counts);
  }

  result(): TargetLengths {
    return {
      bins: TARGET_LINE_BINS.map((b) => b.label),
      splits: Object.fromEntries([...this.bySplit].sort(([a], [b]) => a.localeCompare(b))),
      repostEval: { records: REPOST_EVAL_TARGET_LINES.records, average: REPOST_EVAL_TARGET_LINES.average, bins: [...REPOST_EVAL_TARGET_LINES.bins] },
      paperAverage: { ...REPOST_PAPER_AVG_TARGET_LINES },
    };
  }
}
