/**
 * What refused answers cost. An answer the factory cannot use (it does not parse, or fails a
 * sanity check such as `test_calls_target`) is asked again or ends its step; the tokens it took
 * are spent all the same. Each exchange's index entry carries the checks that refused it
 * (`refusedBy`, empty for an answer that passed), so a run can show what each rule costs: calls,
 * tokens and estimated cost of refused answers in all, by check and by step.
 */

/** Calls and spend of a set of refused answers. */
export interface RefusalFigures {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

export interface RefusalTotals extends RefusalFigures {
  /** Answers that were reviewed at all (refused or not): the denominator of the refusal rate. */
  reviewed: number;
  /** A call refused by several checks counts under each of them (and once in the totals). */
  byCheck: Record<string, RefusalFigures>;
  /** Per step: refused calls and spend, and the answers reviewed. */
  byStep: Record<string, RefusalFigures & { reviewed: number }>;
}

/** What the tally needs of one exchange. */
export interface ReviewedEntry {
  step?: string;
  refusedBy?: string[];
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

export function emptyRefusalFigures(): RefusalFigures {
  return { calls: 0, promptTokens: 0, completionTokens: 0, costUsd: 0 };
}

export function emptyRefusals(): RefusalTotals {
  return { ...emptyRefusalFigures(), reviewed: 0, byCheck: {}, byStep: {} };
}

function addFigures<T extends RefusalFigures>(f: T, e: ReviewedEntry, calls: number): void {
  f.calls += calls;
  f.promptTokens += e.promptTokens;
  f.completionTokens += e.completionTokens;
  f.costUsd += e.costUsd;
}

/**
 * Counts an exchange into `totals` (in place), or `calls` exchanges of one step and one verdict
 * whose tokens and cost `e` sums (a store's grouped query); one that was never reviewed is left out.
 */
export function addRefusal(totals: RefusalTotals, e: ReviewedEntry, calls = 1): RefusalTotals {
  if (!e.refusedBy) return totals;
  const step = (totals.byStep[e.step ?? ''] ??= { ...emptyRefusalFigures(), reviewed: 0 });
  totals.reviewed += calls;
  step.reviewed += calls;
  if (e.refusedBy.length === 0) return totals;
  addFigures(totals, e, calls);
  addFigures(step, e, calls);
  for (const check of new Set(e.refusedBy)) addFigures((totals.byCheck[check] ??= emptyRefusalFigures()), e, calls);
  return totals;
}

/** Refused calls over reviewed answers, or null when nothing was reviewed. */
export function refusalRate(f: { calls: number; reviewed: number }): number | null {
  return f.reviewed > 0 ? f.calls / f.reviewed : null;
}

/** One line for progress views: "19 refused (test_calls_target 12, parse_truncated 3)". */
export function formatRefusals(t: RefusalTotals, top = 3): string {
  const checks = Object.entries(t.byCheck)
    .sort(([a, x], [b, y]) => y.calls - x.calls || a.localeCompare(b))
    .slice(0, top)
    .map(([check, f]) => `${check} ${f.calls}`);
  return `${t.calls} refused${checks.length ? ` (${checks.join(', ')})` : ''}`;
}
