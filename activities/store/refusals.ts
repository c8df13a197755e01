/**
 * What refused answers cost. An answer the factory cannot use (it does not parse, or fails a
 * sanity check such as `test_calls_target`) is asked again or ends its step; the tokens it took
 * are spent all the same. Each exchange's index entry carries the checks that refused it
 * (`refusedBy`, empty for an answer that passed; absent when nobody reviewed it), so a run can show
 * what each rule costs: the `Usage` of refused answers in all, by check and by step, beside the
 * number of answers reviewed. The store sums a run's entries (`runRefusals`), the run's summary
 * does the same from the index (`regenerations` in `summary.json`).
 */
import { z } from 'zod';
import { addUsage, callUsage, emptyUsage, UsageSchema, type Usage, type UsageEntry } from './usage';

const count = z.number().int().nonnegative();

export const RefusalTotalsSchema = UsageSchema.extend({
  /** Answers that were reviewed at all (refused or not): the denominator of the refusal rate. */
  reviewed: count,
  /** A call refused by several checks counts under each of them (and once in the totals). */
  byCheck: z.record(z.string(), UsageSchema).default({}),
  /** Per step: refused calls and their usage, and the answers reviewed. */
  byStep: z.record(z.string(), UsageSchema.extend({ reviewed: count })).default({}),
});
export type RefusalTotals = z.infer<typeof RefusalTotalsSchema>;

/** What the tally needs of one exchange. */
export type ReviewedEntry = Pick<UsageEntry, 'step' | 'cached' | 'promptTokens' | 'completionTokens' | 'costUsd' | 'latencyMs'> & { refusedBy?: string[] };

export function emptyRefusals(): RefusalTotals {
  return { ...emptyUsage(), reviewed: 0, byCheck: {}, byStep: {} };
}

/** `u` plus `add`, in place (so the extra fields of `u` stay). */
function addInto<T extends Usage>(u: T, add: Usage): void {
  Object.assign(u, addUsage(u, add));
}

/** Counts one exchange into `totals` (in place); one that was never reviewed is left out. */
export function addRefusal(totals: RefusalTotals, e: ReviewedEntry): RefusalTotals {
  return addRefusalGroup(totals, e, callUsage(e));
}

/**
 * Counts into `totals` (in place) a group of exchanges of one step and one verdict, whose summed
 * usage is `usage` (a store's grouped query); a group that was never reviewed is left out.
 */
export function addRefusalGroup(totals: RefusalTotals, verdict: { step?: string; refusedBy?: string[] }, usage: Usage): RefusalTotals {
  if (!verdict.refusedBy) return totals;
  const step = (totals.byStep[verdict.step ?? ''] ??= { ...emptyUsage(), reviewed: 0 });
  totals.reviewed += usage.calls;
  step.reviewed += usage.calls;
  if (verdict.refusedBy.length === 0) return totals;
  addInto(totals, usage);
  addInto(step, usage);
  for (const check of new Set(verdict.refusedBy)) addInto((totals.byCheck[check] ??= emptyUsage()), usage);
  return totals;
}

/** One line for progress views: "19 refused (test_calls_target 12, parse_truncated 3)". */
export function formatRefusals(t: Pick<RefusalTotals, 'calls' | 'byCheck'>, top = 3): string {
  const checks = Object.entries(t.byCheck)
    .sort(([a, x], [b, y]) => y.calls - x.calls || a.localeCompare(b))
    .slice(0, top)
    .map(([check, f]) => `${check} ${f.calls}`);
  return `${t.calls} refused${checks.length ? ` (${checks.join(', ')})` : ''}`;
}
