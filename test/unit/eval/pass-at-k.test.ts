import { meanPassAtK, passAtK, passAtKs } from '../../../activities/eval/pass-at-k';

/** C(n, k) by its definition, for the hand checks. */
function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

describe('unbiased pass@k', () => {
  it.each([
    // n, c, k, hand-computed value
    [10, 3, 1, 0.3],
    [10, 3, 5, 1 - 21 / 252], // C(7,5)/C(10,5)
    [10, 0, 5, 0],
    [5, 5, 1, 1],
    [10, 1, 10, 1],
    [4, 1, 2, 0.5], // 1 - C(3,2)/C(4,2) = 1 - 3/6
    [20, 2, 10, 1 - 45 / 190], // C(18,10)/C(20,10) = 43758/184756 = 45/190
  ])('n=%i c=%i k=%i', (n, c, k, expected) => {
    expect(passAtK(n, c, k)).toBeCloseTo(expected, 12);
    expect(passAtK(n, c, k)).toBeCloseTo(1 - choose(n - c, k) / choose(n, k), 12);
  });

  it('equals the share of passing samples at k = 1', () => {
    for (let n = 1; n <= 12; n++) for (let c = 0; c <= n; c++) expect(passAtK(n, c, 1)).toBeCloseTo(c / n, 12);
  });

  it('stays exact where the binomials overflow a double', () => {
    // C(200, 100) is ~9e58; the product form does not care.
    expect(passAtK(200, 1, 100)).toBeCloseTo(0.5, 12);
  });

  it('refuses k above n and impossible counts', () => {
    expect(() => passAtK(3, 1, 5)).toThrow(/at least 5 samples/);
    expect(() => passAtK(3, 4, 1)).toThrow(/0 <= c <= n/);
  });

  it('averages over functions and leaves out those with fewer than k samples', () => {
    const fns = [
      { n: 10, c: 3 },
      { n: 10, c: 0 },
      { n: 2, c: 2 },
    ];
    expect(meanPassAtK(fns, 1)).toBeCloseTo((0.3 + 0 + 1) / 3, 12);
    expect(meanPassAtK(fns, 5)).toBeCloseTo((1 - 21 / 252 + 0) / 2, 12);
    expect(meanPassAtK([{ n: 1, c: 1 }], 5)).toBeNull();
    expect(passAtKs(fns, [1, 10])).toEqual({ 'pass@1': meanPassAtK(fns, 1), 'pass@10': meanPassAtK(fns, 10) });
  });
});
