/**
 * The verification server's admission (scripts/serve.ts):
 * bounded concurrency: at most `maxInFlight` requests run, at most
 * `maxQueued` wait (first come, first served); past that a request is refused at once, never
 * dropped later. Each request has its own time limit from its arrival: one still waiting when
 * it passes leaves the queue at once (its slot is free for another) with a DeadlinePassedError;
 * one running gets its signal aborted and ends as its task makes it end.
 */
export class QueueFullError extends Error {
  override name = 'QueueFullError';
}

/** The request's time limit passed while it waited for a slot: it never ran. */
export class DeadlinePassedError extends Error {
  override name = 'DeadlinePassedError';
}

/** Timers, injectable so the queue's deadlines are tested without waiting. */
export interface AdmissionTimers {
  /** Calls `fn` once after `ms`; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void;
}

export const realTimers: AdmissionTimers = {
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return () => clearTimeout(t);
  },
};

interface Waiter {
  admit: () => void;
}

export class Admission {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    readonly maxInFlight: number,
    readonly maxQueued: number,
    private readonly timers: AdmissionTimers = realTimers,
  ) {
    if (!(maxInFlight >= 1) || !(maxQueued >= 0)) throw new Error('maxInFlight must be at least 1 and maxQueued at least 0');
  }

  get inFlight(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Runs `task` when a slot is free; throws QueueFullError at once when the queue is full, and
   * DeadlinePassedError when `timeoutMs` passes before a slot is free. Past `timeoutMs` a running
   * task's signal is aborted.
   */
  async run<T>(task: (signal: AbortSignal) => Promise<T>, timeoutMs = Infinity): Promise<T> {
    if (this.running >= this.maxInFlight && this.waiting.length >= this.maxQueued) throw new QueueFullError(`${this.running} request(s) running and ${this.waiting.length} waiting: the queue is full`);
    const controller = new AbortController();
    const cancelTimer = Number.isFinite(timeoutMs) ? this.timers.after(Math.max(0, timeoutMs), () => controller.abort()) : () => undefined;
    try {
      if (this.running >= this.maxInFlight) {
        await new Promise<void>((resolve, reject) => {
          const waiter: Waiter = {
            admit: () => {
              controller.signal.removeEventListener('abort', leave);
              resolve();
            },
          };
          const leave = () => {
            const i = this.waiting.indexOf(waiter);
            if (i >= 0) this.waiting.splice(i, 1);
            reject(new DeadlinePassedError(`waited ${timeoutMs} ms in the queue without a free slot`));
          };
          if (controller.signal.aborted) return leave();
          controller.signal.addEventListener('abort', leave, { once: true });
          this.waiting.push(waiter);
        });
      } else this.running += 1;
      try {
        return await task(controller.signal);
      } finally {
        // The slot passes to the first waiter, else it is free.
        const next = this.waiting.shift();
        if (next) next.admit();
        else this.running -= 1;
      }
    } finally {
      cancelTimer();
    }
  }
}
