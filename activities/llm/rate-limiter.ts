/**
 * The per-process half of LLM rate limiting: requests per minute and tokens per minute per
 * model, and a cap on calls in flight. (The task-queue-wide half is Temporal's
 * `maxTaskQueueActivitiesPerSecond` on the LLM worker, wired from
 * `workers.llmActivitiesPerSecond`; it bounds all worker processes together.)
 *
 * Each budget is a token bucket that refills continuously at the per-minute rate and holds at
 * most `burstSeconds` worth, so a limit of 600 requests/minute means ~10 per second, not 600
 * in the first instant. A request larger than the bucket waits for a full bucket and then
 * drives it negative, so long prompts still average out to the tokens-per-minute budget.
 * Token usage is first charged as an estimate, then corrected with the real count.
 */

export interface RateLimits {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  /** Calls in flight at once in this process (across models). */
  concurrency?: number;
  /** How many seconds of budget may be spent at once. */
  burstSeconds?: number;
}

export interface LimiterClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: LimiterClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export class TokenBucket {
  private level: number;
  private last: number;
  readonly capacity: number;
  private readonly perMs: number;

  constructor(perMinute: number, burstSeconds: number, private readonly now: () => number) {
    this.perMs = perMinute / 60_000;
    this.capacity = Math.max(1, (perMinute / 60) * burstSeconds);
    this.level = this.capacity;
    this.last = now();
  }

  private refill(): void {
    const t = this.now();
    this.level = Math.min(this.capacity, this.level + (t - this.last) * this.perMs);
    this.last = t;
  }

  /** Milliseconds until `amount` may be taken (0 = now). */
  waitFor(amount: number): number {
    this.refill();
    const need = Math.min(amount, this.capacity);
    return this.level >= need ? 0 : Math.ceil((need - this.level) / this.perMs);
  }

  take(amount: number): void {
    this.refill();
    this.level -= amount;
  }

  /** Corrects an earlier charge (positive = used more than charged). */
  adjust(delta: number): void {
    this.refill();
    this.level = Math.min(this.capacity, this.level - delta);
  }

  get available(): number {
    this.refill();
    return this.level;
  }
}

class Semaphore {
  private inUse = 0;
  private readonly waiters: (() => void)[] = [];
  constructor(private readonly size: number) {}

  async acquire(): Promise<void> {
    if (this.inUse < this.size) {
      this.inUse++;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    // Hand the slot straight to the next waiter so a newcomer cannot overtake it.
    if (next) next();
    else this.inUse--;
  }

  get active(): number {
    return this.inUse;
  }
}

/** Held for the duration of one call; settle it exactly once, with the real token count when known. */
export interface RatePermit {
  /** Milliseconds spent waiting for this permit. */
  readonly waitedMs: number;
  settle(actualTokens?: number): void;
}

interface ModelBudget {
  requests?: TokenBucket;
  tokens?: TokenBucket;
  /** Waiters of one model queue up in order, so nobody starves behind later arrivals. */
  queue: Promise<void>;
}

export class RateLimiter {
  private readonly budgets = new Map<string, ModelBudget>();
  private readonly slots: Semaphore | undefined;
  private readonly clock: LimiterClock;

  constructor(
    private readonly limits: RateLimits,
    clock: LimiterClock = realClock,
  ) {
    this.clock = clock;
    this.slots = limits.concurrency ? new Semaphore(limits.concurrency) : undefined;
  }

  private budget(model: string): ModelBudget {
    let b = this.budgets.get(model);
    if (!b) {
      const burst = this.limits.burstSeconds ?? 1;
      const now = () => this.clock.now();
      b = {
        requests: this.limits.requestsPerMinute ? new TokenBucket(this.limits.requestsPerMinute, burst, now) : undefined,
        tokens: this.limits.tokensPerMinute ? new TokenBucket(this.limits.tokensPerMinute, burst, now) : undefined,
        queue: Promise.resolve(),
      };
      this.budgets.set(model, b);
    }
    return b;
  }

  async acquire(model: string, estimatedTokens: number): Promise<RatePermit> {
    const started = this.clock.now();
    if (this.slots) await this.slots.acquire();
    const budget = this.budget(model);
    const turn = budget.queue.then(async () => {
      for (;;) {
        const wait = Math.max(budget.requests?.waitFor(1) ?? 0, budget.tokens?.waitFor(estimatedTokens) ?? 0);
        if (wait <= 0) break;
        await this.clock.sleep(wait);
      }
      budget.requests?.take(1);
      budget.tokens?.take(estimatedTokens);
    });
    budget.queue = turn.catch(() => undefined);
    try {
      await turn;
    } catch (err) {
      this.slots?.release();
      throw err;
    }
    const waitedMs = this.clock.now() - started;
    let settled = false;
    return {
      waitedMs,
      settle: (actualTokens?: number) => {
        if (settled) return;
        settled = true;
        if (actualTokens !== undefined) budget.tokens?.adjust(actualTokens - estimatedTokens);
        this.slots?.release();
      },
    };
  }

  /** Calls in flight right now (0 when no concurrency cap is set). */
  get inFlight(): number {
    return this.slots?.active ?? 0;
  }
}
