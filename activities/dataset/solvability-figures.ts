/**
 * What the solvability stage did to a run's accepted records, for `summary.json`, the report and
 * the dataset card: how many records it checked, how their solve rates are distributed (the share
 * of the implementations a model wrote from the prompt alone that pass), how many assertions it
 * removed as checking behaviour the prompt does not determine, and how many docstrings it wrote.
 * Records stream through one at a time.
 */
import type { DatasetRecord } from '../store/records';

export interface SolvabilityFigures {
  /** Accepted records that went through the stage. */
  checked: number;
  /** Their mean solve rate (null: none checked). */
  meanSolveRate: number | null;
  /** Records per solve rate (passes over implementations scored, to two decimals; `solveRateBars` orders them). */
  solveRates: Record<string, number>;
  /** Records no implementation solved even after the removals. */
  unsolved: number;
  /** Records none solved as their tests were first written. */
  unsolvedInitially: number;
  /** Failing assertions put to the judge. */
  judged: number;
  /** Assertions removed as unspecified, and the records that lost any. */
  removedAssertions: number;
  recordsWithRemovals: number;
  /** Records whose prompt shows a docstring written from the ground truth. */
  generatedDocstrings: number;
  /** Functions the stage rejected (the run's `rejectedAt.solvability`). */
  rejected: number;
}

type Checked = Pick<DatasetRecord, 'solve_rate' | 'solvability'>;

/** The solve-rate distribution lowest rate first (an object's integer-like keys, "0" and "1", would come first). */
export function solveRateBars(f: Pick<SolvabilityFigures, 'solveRates'>): { rate: number; records: number }[] {
  return Object.entries(f.solveRates)
    .map(([rate, records]) => ({ rate: Number(rate), records }))
    .sort((a, b) => a.rate - b.rate);
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export class SolvabilityFiguresBuilder {
  private checked = 0;
  private rateSum = 0;
  private rated = 0;
  private readonly rates = new Map<number, number>();
  private unsolved = 0;
  private unsolvedInitially = 0;
  private judged = 0;
  private removed = 0;
  private withRemovals = 0;
  private generated = 0;

  add(record: Checked): void {
    const s = record.solvability;
    if (!s) return;
    this.checked++;
    if (record.solve_rate !== null && record.solve_rate !== undefined) {
      this.rated++;
      this.rateSum += record.solve_rate;
      const key = round2(record.solve_rate);
      this.rates.set(key, (this.rates.get(key) ?? 0) + 1);
    }
    if (s.passed === 0) this.unsolved++;
    if (s.passed_initially === 0) this.unsolvedInitially++;
    this.judged += s.judged;
    this.removed += s.removed_assertions.length;
    if (s.removed_assertions.length > 0) this.withRemovals++;
    if (s.docstring === 'generated') this.generated++;
  }

  result(rejected: number): SolvabilityFigures {
    return {
      checked: this.checked,
      meanSolveRate: this.rated ? Math.round((this.rateSum / this.rated) * 1000) / 1000 : null,
      solveRates: Object.fromEntries([...this.rates].map(([rate, n]) => [String(rate), n])),
      unsolved: this.unsolved,
      unsolvedInitially: this.unsolvedInitially,
      judged: this.judged,
      removedAssertions: this.removed,
      recordsWithRemovals: this.withRemovals,
      generatedDocstrings: this.generated,
      rejected,
    };
  }
}
