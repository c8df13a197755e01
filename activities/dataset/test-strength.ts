/**
 * How strong a run's accepted tests are, for `summary.json`, `report.html` and the dataset card:
 * the spread of the records' mutation scores (killed / run of the target's mutants), the mutants
 * counted over all records, the mutation rounds taken and the stability verdicts. Added one record
 * at a time; it keeps one number per scored record.
 */
import { scoreSpread } from '../sandbox/mutation';
import type { DatasetRecord } from '../store/records';

export interface TestStrength {
  /** Accepted records with a mutation score. */
  scored: number;
  /** Accepted records without one (the run did not score, or the target gave no mutant). */
  unscored: number;
  mean: number | null;
  p25: number | null;
  median: number | null;
  p75: number | null;
  min: number | null;
  max: number | null;
  /** Scored records per tenth: [0, 0.1), ..., [0.9, 1.0), and 1.0 alone. */
  histogram: { from: number; to: number; records: number }[];
  /** Records whose every mutant was killed. */
  perfect: number;
  /** `leftOut`: mutants no allowed test can see, never run (output and message changes, same-bytecode mutants). */
  mutants: { made: number; killed: number; survived: number; timedOut: number; notRun: number; leftOut: { output: number; message: number; equivalent: number } };
  /** Records that took at least one mutation round, and the rounds in all. */
  improvedByRounds: number;
  mutationRounds: number;
  stability: { stable: number; flaky: number; unchecked: number };
}

type StrengthRecord = Pick<DatasetRecord, 'mutation_score' | 'mutants' | 'mutation_rounds' | 'stability'>;

export class TestStrengthBuilder {
  private readonly scores: number[] = [];
  private unscored = 0;
  private readonly mutants = { made: 0, killed: 0, survived: 0, timedOut: 0, notRun: 0 };
  private readonly leftOut = { output: 0, message: 0, equivalent: 0 };
  private improvedByRounds = 0;
  private mutationRounds = 0;
  private readonly stability = { stable: 0, flaky: 0, unchecked: 0 };

  add(r: StrengthRecord): void {
    if (typeof r.mutation_score === 'number') this.scores.push(r.mutation_score);
    else this.unscored += 1;
    if (r.mutants) {
      this.mutants.made += r.mutants.made;
      this.mutants.killed += r.mutants.killed;
      this.mutants.survived += r.mutants.survived;
      this.mutants.timedOut += r.mutants.timed_out;
      this.mutants.notRun += r.mutants.not_run;
      const left = r.mutants.left_out;
      if (left) {
        this.leftOut.output += left.output;
        this.leftOut.message += left.message;
        this.leftOut.equivalent += left.equivalent;
      }
    }
    const rounds = r.mutation_rounds ?? 0;
    this.mutationRounds += rounds;
    if (rounds > 0) this.improvedByRounds += 1;
    if (r.stability === 'stable' || r.stability === 'flaky') this.stability[r.stability] += 1;
    else this.stability.unchecked += 1;
  }

  result(): TestStrength {
    return {
      scored: this.scores.length,
      unscored: this.unscored,
      ...scoreSpread(this.scores),
      mutants: { ...this.mutants, leftOut: { ...this.leftOut } },
      improvedByRounds: this.improvedByRounds,
      mutationRounds: this.mutationRounds,
      stability: { ...this.stability },
    };
  }
}
