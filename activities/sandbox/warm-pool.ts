/**
 * A bounded pool of warm sandbox containers for one worker. A run borrows a container, executes
 * through `exec` in a fresh run directory, and gives it back. Cleaning happens inside the run's
 * own exec (the harness kills what the script left running when it ends, and empties and checks
 * the container before the next script starts, reporting it unclean if it cannot), so a
 * returned container is lendable at once. A container is thrown away after `recycleAfterRuns`
 * runs or once it is `maxAgeMs` old (so every container's life is bounded and a sweep by age never
 * takes a live one), or when the caller says it is not reusable (`lendableAfter`: timeout, OOM,
 * unclean, lost exec, a run ended by a signal or without its result). After a Docker failure the idle containers can be thrown away at once (`discardIdle`):
 * a restarted daemon has stopped them all.
 */
import type Docker from 'dockerode';
import type { SandboxStatus } from './schema';

/**
 * Whether a container may be lent again after a run. Never after a timeout, an out-of-memory
 * kill or a sandbox fault, after a run ended by a signal (exit status 128 and above: the script's
 * process was killed, or the supervisor itself), or after a run whose supervisor left no result
 * it was asked for: whatever that run started may still be there, and only a fresh container is
 * known to be clean. The cleaning at the start of every run is the second line, not the only one.
 */
export function lendableAfter(run: { status: SandboxStatus; exitCode: number | null; resultRead: boolean | null }): boolean {
  if (run.status === 'timeout' || run.status === 'oom' || run.status === 'infrastructure') return false;
  if (run.exitCode === null || run.exitCode >= 128) return false;
  return run.resultRead !== false;
}

export interface PoolHooks {
  create(): Promise<Docker.Container>;
  destroy(container: Docker.Container): Promise<void>;
}

export interface Lease {
  container: Docker.Container;
  /** Runs this container has served, this one included. */
  runs: number;
}

interface Slot extends Lease {
  state: 'idle' | 'busy';
  createdAt: number;
}

export interface PoolStats {
  created: number;
  recycled: number;
}

export class WarmPool {
  private readonly slots = new Set<Slot>();
  private readonly leases = new Map<Lease, Slot>();
  private readonly waiters: { resolve: (s: Slot) => void; reject: (e: Error) => void }[] = [];
  private readonly background = new Set<Promise<unknown>>();
  private creating = 0;
  private closed = false;
  readonly stats: PoolStats = { created: 0, recycled: 0 };

  constructor(
    private readonly hooks: PoolHooks,
    private readonly size: number,
    private readonly recycleAfterRuns: number,
    private readonly maxAgeMs: number = Number.POSITIVE_INFINITY,
  ) {}

  /** Starts containers up to the pool size, so the first runs find them warm. */
  async warm(): Promise<void> {
    const missing = this.size - this.slots.size - this.creating;
    await Promise.all(Array.from({ length: Math.max(0, missing) }, () => this.addSlot().then((s) => this.makeIdle(s))));
  }

  async acquire(signal?: AbortSignal): Promise<Lease> {
    if (this.closed) throw new Error('the sandbox pool is closed');
    for (const s of [...this.slots]) if (s.state === 'idle' && this.tooOld(s)) this.discard(s);
    const idle = [...this.slots].find((s) => s.state === 'idle');
    let slot: Slot;
    if (idle) slot = idle;
    else if (this.slots.size + this.creating < this.size) slot = await this.addSlot();
    else {
      slot = await new Promise<Slot>((resolve, reject) => {
        const waiter = { resolve, reject };
        this.waiters.push(waiter);
        signal?.addEventListener('abort', () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(new Error('cancelled while waiting for a sandbox container'));
        });
      });
    }
    slot.state = 'busy';
    slot.runs += 1;
    const lease: Lease = { container: slot.container, runs: slot.runs };
    this.leases.set(lease, slot);
    return lease;
  }

  /** Gives a container back; `reusable: false` (timeout, OOM, lost exec) throws it away. */
  release(lease: Lease, reusable: boolean): void {
    const slot = this.leases.get(lease);
    if (!slot) return;
    this.leases.delete(lease);
    if (!reusable || slot.runs >= this.recycleAfterRuns || this.tooOld(slot) || this.closed) {
      this.discard(slot);
      return;
    }
    this.makeIdle(slot);
  }

  /** Throws away every idle container (and starts replacements): they may all be dead. */
  discardIdle(): number {
    const idle = [...this.slots].filter((s) => s.state === 'idle');
    for (const s of idle) this.discard(s);
    return idle.length;
  }

  private tooOld(slot: Slot): boolean {
    return Date.now() - slot.createdAt >= this.maxAgeMs;
  }

  /** Containers currently held (idle or busy). */
  get containerCount(): number {
    return this.slots.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(new Error('the sandbox pool is closed'));
    // Cleaning and replacing may start more background work; wait until none is left.
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
    await Promise.allSettled([...this.slots].map((s) => this.hooks.destroy(s.container)));
    this.slots.clear();
  }

  private track(p: Promise<unknown>): void {
    this.background.add(p);
    void p.finally(() => this.background.delete(p));
  }

  private async addSlot(): Promise<Slot> {
    this.creating += 1;
    try {
      const container = await this.hooks.create();
      this.stats.created += 1;
      const slot: Slot = { container, runs: 0, state: 'busy', createdAt: Date.now() };
      this.slots.add(slot);
      return slot;
    } finally {
      this.creating -= 1;
    }
  }

  private makeIdle(slot: Slot): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      waiter.resolve(slot);
    } else {
      slot.state = 'idle';
    }
  }

  private discard(slot: Slot): void {
    this.slots.delete(slot);
    this.stats.recycled += 1;
    this.track(this.hooks.destroy(slot.container).catch(() => undefined));
    // Keep the pool warm: a replacement starts now, for a waiter or for the next run.
    if (!this.closed) {
      this.track(
        this.addSlot()
          .then((s) => this.makeIdle(s))
          .catch((err: Error) => this.waiters.shift()?.reject(err)),
      );
    }
  }
}
