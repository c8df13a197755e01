/**
 * When requests waiting for a batch are sent: the open batch is flushed when it holds
 * `maxRequests` requests, when the next request would take it past `maxBytes` of request file,
 * or when its oldest request has waited `maxWaitSec`. Pure: the time is passed in (milliseconds
 * on any clock), so the collector and the tests decide what "now" is.
 */
import { z } from 'zod';
import { BATCH_LIMITS } from './limits';

export const FlushPolicySchema = z.object({
  maxRequests: z.number().int().min(1).max(BATCH_LIMITS.maxRequests).default(BATCH_LIMITS.maxRequests),
  maxBytes: z.number().int().min(1).max(BATCH_LIMITS.maxRequestBytes).default(BATCH_LIMITS.maxRequestBytes),
  maxWaitSec: z.number().positive().default(600),
});
export type FlushPolicy = z.infer<typeof FlushPolicySchema>;

export type FlushReason = 'requests' | 'bytes' | 'age';

/** What the open batch holds, and when its first request joined it. */
export interface OpenBatch {
  requests: number;
  bytes: number;
  openedAt: number;
}

/** A single request larger than a whole batch may be: it cannot be batched at all. */
export class RequestTooLargeError extends Error {
  override name = 'RequestTooLargeError';
}

/**
 * A request line of `bytes` joining at `now`: the batch it joins, and whether the open batch
 * must be flushed first because the line would take it past a limit.
 */
export function admit(open: OpenBatch | null, bytes: number, now: number, policy: FlushPolicy): { flushFirst: FlushReason | null; batch: OpenBatch } {
  if (bytes > policy.maxBytes) throw new RequestTooLargeError(`a request line of ${bytes} bytes is larger than a batch may be (${policy.maxBytes} bytes)`);
  if (open && open.requests + 1 > policy.maxRequests) return { flushFirst: 'requests', batch: { requests: 1, bytes, openedAt: now } };
  if (open && open.bytes + bytes > policy.maxBytes) return { flushFirst: 'bytes', batch: { requests: 1, bytes, openedAt: now } };
  return { flushFirst: null, batch: open ? { requests: open.requests + 1, bytes: open.bytes + bytes, openedAt: open.openedAt } : { requests: 1, bytes, openedAt: now } };
}

/** Why the open batch is due at `now` (full, or waited long enough), or null when it is not. */
export function flushDue(open: OpenBatch | null, now: number, policy: FlushPolicy): FlushReason | null {
  if (!open || open.requests === 0) return null;
  if (open.requests >= policy.maxRequests) return 'requests';
  if (open.bytes >= policy.maxBytes) return 'bytes';
  if (now - open.openedAt >= policy.maxWaitSec * 1000) return 'age';
  return null;
}

/** When the open batch becomes due by age (the collector can sleep until then), or null. */
export function flushDueAt(open: OpenBatch | null, policy: FlushPolicy): number | null {
  return open && open.requests > 0 ? open.openedAt + policy.maxWaitSec * 1000 : null;
}

/** A flushed batch: its items in the order they joined, and why it was flushed. */
export interface Flushed<T> {
  items: T[];
  reason: FlushReason;
}

/** Items waiting for a batch, flushed by the policy; the clock is injected. */
export class BatchAccumulator<T> {
  private open: OpenBatch | null = null;
  private items: T[] = [];

  constructor(
    private readonly policy: FlushPolicy,
    private readonly clock: () => number,
  ) {}

  get size(): number {
    return this.items.length;
  }

  /** Adds an item whose request line takes `bytes`; returns the batches that are due now (zero, one or two). */
  add(item: T, bytes: number): Flushed<T>[] {
    const now = this.clock();
    const { flushFirst, batch } = admit(this.open, bytes, now, this.policy);
    const out: Flushed<T>[] = [];
    if (flushFirst) out.push(this.take(flushFirst));
    this.open = batch;
    this.items.push(item);
    const due = flushDue(this.open, now, this.policy);
    if (due) out.push(this.take(due));
    return out;
  }

  /** The open batch if it is due now, else null. */
  takeDue(): Flushed<T> | null {
    const due = flushDue(this.open, this.clock(), this.policy);
    return due ? this.take(due) : null;
  }

  nextDueAt(): number | null {
    return flushDueAt(this.open, this.policy);
  }

  private take(reason: FlushReason): Flushed<T> {
    const items = this.items;
    this.items = [];
    this.open = null;
    return { items, reason };
  }
}
