import { codetScores, expectedHitAtK, expectedPrecisionAtK, genxScores, topCandidate, type PassMatrix } from '../../../activities/eval/ranking';
import { rankingSummary } from '../../../activities/eval/ranking-summary';

const m = (rows: string[]): PassMatrix => rows.map((r) => [...r].map((c) => c === '1'));

describe('GenX dual-critic scores (Algorithm 2)', () => {
  it('matches the first iteration computed by hand', () => {
    // code = P·1 / (2 + 1e-8); test = Pᵀ·code / (Σcode + 1e-8)
    const { code, test } = genxScores(m(['11', '10']), { maxIterations: 1 });
    expect(code[0]).toBeCloseTo(2 / 2, 7);
    expect(code[1]).toBeCloseTo(1 / 2, 7);
    expect(test[0]).toBeCloseTo((1 + 0.5) / 1.5, 7);
    expect(test[1]).toBeCloseTo(1 / 1.5, 7);
  });

  it('converges to the hand-solved fixed point', () => {
    // With code = [1, x] and test = [1, y]: x = 1 / (1 + y), y = 1 / (1 + x), so x = y = (√5 - 1) / 2.
    const r = genxScores(m(['11', '10']));
    const golden = (Math.sqrt(5) - 1) / 2;
    expect(r.converged).toBe(true);
    expect(r.code[0]).toBeCloseTo(1, 6);
    expect(r.code[1]).toBeCloseTo(golden, 6);
    expect(r.test[0]).toBeCloseTo(1, 6);
    expect(r.test[1]).toBeCloseTo(golden, 6);
  });

  it('scores every candidate and test 0 when nothing passes, and 1 when everything does', () => {
    const none = genxScores(m(['000', '000']));
    expect([...none.code, ...none.test]).toEqual([0, 0, 0, 0, 0]);
    const all = genxScores(m(['11', '11', '11']));
    for (const v of [...all.code, ...all.test]) expect(v).toBeCloseTo(1, 6);
  });

  it('stops at the iteration limit and says so', () => {
    const r = genxScores(m(['110', '011', '101']), { maxIterations: 2, tolerance: 1e-30 });
    expect(r).toMatchObject({ iterations: 2, converged: false });
  });
});

describe('CodeT consensus sets', () => {
  it('matches the hand-computed scores', () => {
    // {c0,c1} pass {t0,t1}: 2·2 = 4; {c2} passes {t0,t2}: 1·2 = 2; {c3} passes nothing: 0.
    const { code, test } = codetScores(m(['110', '110', '101', '000']));
    expect(code).toEqual([4, 4, 2, 0]);
    // A test takes the best score of the sets that pass it.
    expect(test).toEqual([4, 4, 2]);
  });
});

describe('two of five candidates right, one test wrong', () => {
  // c0, c1 right: pass t0..t3, fail the wrong t4. c2 and c3 are wrong in ways t4 happens to
  // agree with; c4 crashes. Hidden tests: only c0 and c1 pass.
  const matrix = m(['11110', '11110', '11001', '10001', '00000']);
  const hidden = [true, true, false, false, false];

  it('GenX ranks a right candidate first', () => {
    const { code, test } = genxScores(matrix);
    expect([0, 1]).toContain(topCandidate(code));
    expect(code[0]).toBeCloseTo(code[1]!, 12);
    expect(Math.min(code[0]!, code[1]!)).toBeGreaterThan(Math.max(code[2]!, code[3]!, code[4]!));
    // The wrong test is the lowest-scored test.
    expect(test.indexOf(Math.min(...test))).toBe(4);
    expect(expectedHitAtK(code, hidden, 1)).toBe(1);
  });

  it('CodeT ranks a right candidate first', () => {
    const { code } = codetScores(matrix);
    expect(code).toEqual([8, 8, 3, 2, 0]);
    expect([0, 1]).toContain(topCandidate(code));
    expect(expectedHitAtK(code, hidden, 1)).toBe(1);
  });

  it('summarises n@k and Pr@k per method; random equals pass@k', () => {
    const s = rankingSummary({ rows: ['11110', '11110', '11001', '10001', '00000'], truthRow: '11110', hidden, ks: [1, 2, 5], genx: { tolerance: 1e-9, maxIterations: 1000 } });
    expect(s.tests).toBe(5);
    expect(s.testsTruthPasses).toBe(4);
    expect(s.methods.genx.hitAtK).toEqual({ 'n@1': 1, 'n@2': 1, 'n@5': 1 });
    expect(s.methods.codet.hitAtK).toEqual({ 'n@1': 1, 'n@2': 1, 'n@5': 1 });
    // Random: every order equally likely, so n@k is pass@k with n = 5, c = 2.
    expect(s.methods.random.hitAtK['n@1']).toBeCloseTo(0.4, 12);
    expect(s.methods.random.hitAtK['n@2']).toBeCloseTo(1 - 3 / 10, 12);
    // CodeT test scores: t0..t3 get 8 (the right pair's set), t4 gets 3: the top 4 are all right.
    expect(s.methods.codet.precisionAtK['Pr@1']).toBe(1);
    expect(s.methods.genx.precisionAtK['Pr@1']).toBe(1);
    // Random over tests: 4 of 5 are right.
    expect(s.methods.random.precisionAtK['Pr@1']).toBeCloseTo(0.8, 12);
    // The best-ranked row is named by its sample's number when the rows are a subset of the samples.
    expect(s.methods.genx.top).toBe(0);
    const renumbered = rankingSummary({ rows: ['11110', '11110', '11001', '10001', '00000'], truthRow: '11110', hidden, samples: [3, 4, 6, 8, 9], ks: [1], genx: { tolerance: 1e-9, maxIterations: 1000 } });
    expect(renumbered.methods.genx.top).toBe(3);
    expect(() => rankingSummary({ rows: ['1'], truthRow: '1', hidden: [true], samples: [1, 2], ks: [1], genx: { tolerance: 1e-9, maxIterations: 10 } })).toThrow(/one sample number per matrix row/);
    expect(s.methods.random.precisionAtK['Pr@5']).toBeCloseTo(0.8, 12);
  });
});

describe('ties at the cut', () => {
  it('n@k is the expectation over tie orders', () => {
    // Three candidates tie for the top; one of them is right: top-1 finds it one time in three.
    expect(expectedHitAtK([5, 5, 5, 1], [false, true, false, false], 1)).toBeCloseTo(1 / 3, 12);
    // Top-2 from the three: 1 - C(2,2)/C(3,2) = 2/3.
    expect(expectedHitAtK([5, 5, 5, 1], [false, true, false, false], 2)).toBeCloseTo(2 / 3, 12);
    // A right candidate alone above the tie is always found.
    expect(expectedHitAtK([9, 5, 5], [true, false, false], 1)).toBe(1);
    // Past every candidate: nothing right, nothing found.
    expect(expectedHitAtK([1, 1], [false, false], 5)).toBe(0);
  });

  it('Pr@k counts a tie at the cut by its share of right tests', () => {
    // Top: t2 (right), then t0, t1 tied, one right: Pr@2 = (1 + 1·1/2) / 2.
    expect(expectedPrecisionAtK([3, 3, 7], [true, false, true], 2)).toBeCloseTo(0.75, 12);
    expect(expectedPrecisionAtK([], [], 3)).toBeNull();
  });
});
