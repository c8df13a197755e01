/**
 * A bounded sliding window over child work: at most `size` in flight, the next starts as soon as
 * one finishes (docs/architecture.md, invariant 7). Deterministic: completion order comes from the history.
 * `run` must not reject: a failure is turned into an outcome by the caller (docs/architecture.md, invariant 8).
 */
export async function slidingWindow<T, R>(items: readonly T[], size: number, run: (item: T, index: number) => Promise<R>): Promise<R[]> {
  let next = 0;
  const results = new Array<R>(items.length);
  await streamingWindow(
    async () => (next < items.length ? { item: items[next]!, index: next++ } : null),
    size,
    async ({ item, index }) => {
      results[index] = await run(item, index);
    },
  );
  return results;
}

/**
 * The same window over items pulled one at a time (`pull` returns null when there are no more, or
 * no more for now), so a source of any size (pages of candidates) never sits in memory or in a
 * payload whole. Resolves when every started item has finished.
 */
export async function streamingWindow<T>(pull: () => Promise<T | null>, size: number, run: (item: T) => Promise<void>): Promise<void> {
  const inFlight = new Map<number, Promise<number>>();
  let id = 0;
  for (;;) {
    if (inFlight.size >= size) inFlight.delete(await Promise.race(inFlight.values()));
    const item = await pull();
    if (item === null) break;
    const mine = id++;
    inFlight.set(
      mine,
      run(item).then(() => mine),
    );
  }
  await Promise.all(inFlight.values());
}
