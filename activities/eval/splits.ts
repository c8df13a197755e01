/**
 * Keeping evaluation and training apart. The crawl records RepoST's split on every record it
 * writes (`split`: `train` or `eval`, from the repository's creation window), so the records
 * themselves say what they may be used for; nothing outside the dataset has to remember it.
 *
 * Training data is never made from a record of the eval split: a dataset holding one is refused
 * whole. Evaluating records of the train split is allowed (a model's Pass@k on its own training
 * functions is a legitimate measurement) but the run says so. A record without a split (RepoST's
 * published format) is taken as the user declares it by choosing the tool.
 */
import type { DatasetMeta, EvalRecord } from './dataset';

export type SplitUse = 'train' | 'eval';

export function splitCounts(records: readonly Pick<EvalRecord, 'split'>[]): DatasetMeta['splits'] {
  const counts = { train: 0, eval: 0, none: 0 };
  for (const r of records) counts[r.split ?? 'none'] += 1;
  return counts;
}

/** Why a dataset must not become training data, or null when it may. */
export function trainingRefusal(records: readonly Pick<EvalRecord, 'split' | 'repo' | 'qualname'>[]): string | null {
  const evalRecords = records.filter((r) => r.split === 'eval');
  if (evalRecords.length === 0) return null;
  const first = evalRecords[0]!;
  return `${evalRecords.length} of ${records.length} record(s) belong to the eval split (e.g. ${first.repo} ${first.qualname}): training data is never made from them`;
}

/** What a run over records of the other split should say (it is allowed), or null. */
export function splitNote(use: SplitUse, splits: DatasetMeta['splits']): string | null {
  if (use === 'eval' && splits.train > 0) return `${splits.train} record(s) of the train split are evaluated: a model trained on them has seen these functions`;
  return null;
}
