/**
 * Train/eval split by repository creation date (RepoST: train 2023-01-31..2024-08-31, eval from
 * 2024-09-01, so evaluation repositories postdate the training data of the models).
 */
export interface DateWindow {
  from: string;
  to: string;
}

export type Split = 'train' | 'eval';

/** The split whose window (inclusive, by calendar day in UTC) contains `createdAt`, or null. */
export function splitOf(createdAt: string | null, windows: { trainWindow: DateWindow; evalWindow: DateWindow }): Split | null {
  if (!createdAt) return null;
  const day = createdAt.slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return null;
  const inside = (w: DateWindow) => day >= w.from && day <= w.to;
  if (inside(windows.evalWindow)) return 'eval';
  if (inside(windows.trainWindow)) return 'train';
  return null;
}
