/**
 * One function's ranking results: each method's scores over the pass/fail matrix of its samples
 * against the candidate tests, judged afterwards with what the ranking never saw, the dataset's
 * hidden equivalence tests (n@k) and the ground truth's results on the candidate tests (Pr@k).
 */
import type { MethodRanking, RankingSummary } from './contracts';
import { RANKING_METHODS, expectedHitAtK, expectedPrecisionAtK, genxScores, scoresFor, topCandidate, type PassMatrix } from './ranking';

export interface RankingInput {
  /** One row per sample: '1'/'0' per test; '' or all zeros for a sample without code. */
  rows: string[];
  /** The ground truth's row. */
  truthRow: string;
  /** Whether each sample passed the hidden tests (its first answer). */
  hidden: boolean[];
  /** The number of each row's sample (default: the row's index), so `top` names a sample. */
  samples?: number[];
  ks: number[];
  genx: { tolerance: number; maxIterations: number };
}

export function rankingSummary(input: RankingInput): RankingSummary {
  const tests = input.truthRow.length;
  if (input.rows.length !== input.hidden.length) throw new Error('one matrix row per sample expected');
  if (input.samples && input.samples.length !== input.rows.length) throw new Error('one sample number per matrix row expected');
  const sampleOf = (row: number | null) => (row === null ? null : (input.samples?.[row] ?? row));
  const matrix: PassMatrix = input.rows.map((r) => Array.from({ length: tests }, (_, j) => r[j] === '1'));
  const truth = Array.from({ length: tests }, (_, j) => input.truthRow[j] === '1');
  const n = input.rows.length;
  const hitKs = input.ks.filter((k) => k <= n);
  const prKs = input.ks.filter((k) => k <= Math.max(tests, 1));
  const genx = genxScores(matrix, input.genx);
  const methods = Object.fromEntries(
    RANKING_METHODS.map((m): [string, MethodRanking] => {
      const scores = m === 'genx' ? genx : scoresFor(m, matrix);
      return [
        m,
        {
          hitAtK: Object.fromEntries(hitKs.map((k) => [`n@${k}`, expectedHitAtK(scores.code, input.hidden, k)])),
          precisionAtK: Object.fromEntries(prKs.map((k) => [`Pr@${k}`, tests ? expectedPrecisionAtK(scores.test, truth, k) : null])),
          top: sampleOf(topCandidate(scores.code)),
        },
      ];
    }),
  ) as RankingSummary['methods'];
  return { tests, testsTruthPasses: truth.filter(Boolean).length, methods, genxIterations: genx.iterations, genxConverged: genx.converged };
}
