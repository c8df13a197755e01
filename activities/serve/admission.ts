/**
 * The verification server's admission (scripts/serve.ts):
 * bounded concurrency: at most `maxInFlight` requests run, at most
 * `maxQueued` wait (first come, first served); past that a request is refused at once, never
 * dropped later. What is admitted always runs to its end.
 */
export class QueueFullError extends Error {
  override name = 'QueueFullError';
}

export class Admission {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly maxInFlight: number,
    readonly maxQueued: number,
  ) {
    if (!(maxInFlight >= 1) || !(maxQueued >= 0)) throw new Error('maxInFlight must be at least 1 and maxQueued at least 0');
  }

  get inFlight(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Runs `task` when a slot is free; throws QueueFullError at once when the queue is full. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.maxInFlight) {
      if (this.waiting.length >= this.maxQueued) throw new QueueFullError(`${this.running} request(s) running and ${this.waiting.length} waiting: the queue is full`);
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running += 1;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
