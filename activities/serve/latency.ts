/** Latency percentiles over the most recent requests (a ring of the last `capacity` samples). */
export class LatencyWindow {
  private readonly samples: number[] = [];
  private next = 0;
  count = 0;

  constructor(private readonly capacity = 10_000) {}

  add(ms: number): void {
    this.count += 1;
    if (this.samples.length < this.capacity) this.samples.push(ms);
    else {
      this.samples[this.next] = ms;
      this.next = (this.next + 1) % this.capacity;
    }
  }

  /** Nearest-rank percentiles (null with no samples). */
  percentiles(ps: readonly number[] = [50, 90, 99]): Record<string, number | null> {
    const sorted = [...this.samples].sort((a, b) => a - b);
    const out: Record<string, number | null> = {};
    for (const p of ps) out[`p${p}`] = sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]! : null;
    return out;
  }
}
