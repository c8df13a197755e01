/**
 * A bounded sliding window over child work: at most `size` in flight, the next starts as soon as
 * one finishes (DESIGN invariant 7). Deterministic: completion order comes from the history.
 */
export async function slidingWindow<T, R>(items: readonly T[], size: number, run: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  const inFlight = new Map<number, Promise<number>>();
  for (let i = 0; i < items.length; i++) {
    if (inFlight.size >= size) inFlight.delete(await Promise.race(inFlight.values()));
    inFlight.set(
      i,
      run(items[i]!, i).then((r) => {
        results[i] = r;
        return i;
      }),
    );
  }
  await Promise.all(inFlight.values());
  return results;
}
