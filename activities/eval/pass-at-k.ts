/**
 * Pass@k with the unbiased estimator of Chen et al. (2021), as RepoST reports it: with n samples
 * of which c pass, pass@k = 1 - C(n-c, k) / C(n, k), computed as a product to stay exact for
 * large n. The dataset's score is the mean over functions.
 */

export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 1 || k < 1 || c < 0 || c > n) {
    throw new Error(`pass@k needs integers 1 <= k, 0 <= c <= n (got n=${n}, c=${c}, k=${k})`);
  }
  if (k > n) throw new Error(`pass@${k} needs at least ${k} samples (got ${n})`);
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

/** Mean pass@k over functions, each given as (n, c); functions with fewer than k samples are left out. */
export function meanPassAtK(functions: readonly { n: number; c: number }[], k: number): number | null {
  const eligible = functions.filter((f) => f.n >= k);
  if (eligible.length === 0) return null;
  return eligible.reduce((sum, f) => sum + passAtK(f.n, f.c, k), 0) / eligible.length;
}

/** Pass@k for each k, keyed `pass@k`. */
export function passAtKs(functions: readonly { n: number; c: number }[], ks: readonly number[]): Record<string, number | null> {
  return Object.fromEntries(ks.map((k) => [`pass@${k}`, meanPassAtK(functions, k)]));
}
