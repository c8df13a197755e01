/**
 * Ranking candidates without the ground truth, from the pass/fail matrix of candidate solutions
 * (rows) against candidate tests (columns):
 *   - GenX's dual-critic scores (Algorithm 2): code and test scores start at 1, then
 *     code <- P·test / (Σtest + 1e-8) and test <- Pᵀ·code / (Σcode + 1e-8) until they settle;
 *   - CodeT's consensus sets: candidates passing exactly the same tests form a set scored
 *     |candidates| × |tests passed|; a test gets the best score of a set that passes it;
 *   - random: every candidate scores the same, so every order is equally likely.
 * Ties are broken uniformly at random in expectation: n@k and Pr@k are the expected values over
 * tie orders, so no seed decides a result.
 */
import { passAtK } from './pass-at-k';

/** P[i][j]: candidate i passes test j. */
export type PassMatrix = readonly (readonly boolean[])[];

export const RANKING_METHODS = ['genx', 'codet', 'random'] as const;
export type RankingMethod = (typeof RANKING_METHODS)[number];

export interface Scores {
  code: number[];
  test: number[];
}

const EPSILON = 1e-8;

function shape(p: PassMatrix): { c: number; t: number } {
  const t = p[0]?.length ?? 0;
  if (p.some((row) => row.length !== t)) throw new Error('pass matrix rows differ in length');
  return { c: p.length, t };
}

export function genxScores(p: PassMatrix, options: { tolerance?: number; maxIterations?: number } = {}): Scores & { iterations: number; converged: boolean } {
  const { c, t } = shape(p);
  const tolerance = options.tolerance ?? 1e-9;
  const maxIterations = options.maxIterations ?? 1000;
  let code = new Array<number>(c).fill(1);
  let test = new Array<number>(t).fill(1);
  for (let it = 1; it <= maxIterations; it++) {
    const testSum = test.reduce((a, b) => a + b, 0);
    const nextCode = p.map((row) => row.reduce((s, pass, j) => s + (pass ? test[j]! : 0), 0) / (testSum + EPSILON));
    const codeSum = nextCode.reduce((a, b) => a + b, 0);
    const nextTest = Array.from({ length: t }, (_, j) => p.reduce((s, row, i) => s + (row[j] ? nextCode[i]! : 0), 0) / (codeSum + EPSILON));
    const moved = Math.max(0, ...nextCode.map((v, i) => Math.abs(v - code[i]!)), ...nextTest.map((v, j) => Math.abs(v - test[j]!)));
    code = nextCode;
    test = nextTest;
    if (moved < tolerance) return { code, test, iterations: it, converged: true };
  }
  return { code, test, iterations: maxIterations, converged: false };
}

export function codetScores(p: PassMatrix): Scores {
  const { t } = shape(p);
  const sets = new Map<string, { members: number[]; passed: number[] }>();
  p.forEach((row, i) => {
    const key = row.map((x) => (x ? '1' : '0')).join('');
    const set = sets.get(key) ?? { members: [], passed: row.flatMap((x, j) => (x ? [j] : [])) };
    set.members.push(i);
    sets.set(key, set);
  });
  const code = new Array<number>(p.length).fill(0);
  const test = new Array<number>(t).fill(0);
  for (const { members, passed } of sets.values()) {
    const score = members.length * passed.length;
    for (const i of members) code[i] = score;
    for (const j of passed) test[j] = Math.max(test[j]!, score);
  }
  return { code, test };
}

export function randomScores(p: PassMatrix): Scores {
  const { c, t } = shape(p);
  return { code: new Array<number>(c).fill(1), test: new Array<number>(t).fill(1) };
}

export function scoresFor(method: RankingMethod, p: PassMatrix, options: { tolerance?: number; maxIterations?: number } = {}): Scores {
  if (method === 'genx') return genxScores(p, options);
  if (method === 'codet') return codetScores(p);
  return randomScores(p);
}

/** Indices grouped by equal score, best first (scores within 1e-12 count as equal). */
function tiedGroups(scores: readonly number[]): number[][] {
  const order = scores.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
  const groups: number[][] = [];
  for (const i of order) {
    const last = groups[groups.length - 1];
    if (last && Math.abs(scores[last[0]!]! - scores[i]!) <= 1e-12) last.push(i);
    else groups.push([i]);
  }
  return groups;
}

/**
 * n@k: the probability that the k best-scored candidates include a correct one, ties at the
 * cut broken uniformly at random.
 */
export function expectedHitAtK(scores: readonly number[], correct: readonly boolean[], k: number): number {
  if (scores.length !== correct.length) throw new Error('scores and correctness differ in length');
  let taken = 0;
  for (const group of tiedGroups(scores)) {
    const hits = group.filter((i) => correct[i]).length;
    if (taken + group.length <= k) {
      if (hits > 0) return 1;
      taken += group.length;
      if (taken === k) return 0;
      continue;
    }
    return passAtK(group.length, hits, k - taken);
  }
  return 0;
}

/** Pr@k: the expected share of the k best-scored tests that the ground truth passes. */
export function expectedPrecisionAtK(scores: readonly number[], truthPasses: readonly boolean[], k: number): number | null {
  if (scores.length !== truthPasses.length) throw new Error('scores and ground-truth results differ in length');
  const top = Math.min(k, scores.length);
  if (top === 0) return null;
  let taken = 0;
  let good = 0;
  for (const group of tiedGroups(scores)) {
    const passing = group.filter((j) => truthPasses[j]).length;
    const r = Math.min(group.length, top - taken);
    good += (r * passing) / group.length;
    taken += r;
    if (taken === top) break;
  }
  return good / top;
}

/** The best-ranked candidate (lowest index among ties), or null when there is none. */
export function topCandidate(scores: readonly number[]): number | null {
  return tiedGroups(scores)[0]?.[0] ?? null;
}
