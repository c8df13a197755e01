/** What the benchmarks that time runs one by one share: a quantile, a rounding, a timed call. */

/** The value at quantile `q` (0 to 1) of `values` (the lower one between two). */
export function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

export const round = (n: number, digits = 2) => Number(n.toFixed(digits));

/** `f`'s value and how long it took, in milliseconds. */
export async function timed<T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await f();
  return { value, ms: performance.now() - t0 };
}
