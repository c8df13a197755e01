/**
 * The creation-date window one firing of a live benchmark searches: RepoST's idea of evaluation
 * sets from repositories created after a model's training cutoff, refreshed on a schedule. A
 * firing at time T with period P takes repositories created in [T - P, T), by UTC calendar day
 * (GitHub's search qualifiers are days), never before the cutoff: consecutive firings a whole
 * number of days apart cover each day once. A period under a day searches the current day.
 */
import { z } from 'zod';

const DAY_MS = 24 * 60 * 60 * 1000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export const IsoDaySchema = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date as YYYY-MM-DD').refine((s) => {
  const t = Date.parse(`${s}T00:00:00Z`);
  return !Number.isNaN(t) && day(t) === s;
}, 'not a calendar date');

export interface CreationWindow {
  /** First day, inclusive (YYYY-MM-DD). */
  from: string;
  /** Last day, inclusive. */
  to: string;
}

/** The window of a firing, or null when it lies entirely before the cutoff. */
export function benchmarkWindow(firedAt: Date, everyMs: number, sinceCutoff: string): CreationWindow | null {
  const fired = firedAt.getTime();
  const to = everyMs >= DAY_MS ? day(fired - 1) : day(fired);
  const start = everyMs >= DAY_MS ? day(fired - everyMs) : day(fired);
  const from = start < sinceCutoff ? sinceCutoff : start;
  return from <= to ? { from, to } : null;
}

/** A readable, sortable run id for a firing, the same on every retry: `<schedule>-YYYYMMDD-HHMMSS`. */
export function benchmarkRunId(scheduleId: string, firedAt: Date): string {
  const stamp = firedAt.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${scheduleId}-${stamp}`;
}
