import { admit, BatchAccumulator, BATCH_LIMITS, flushDue, flushDueAt, FlushPolicySchema, RequestTooLargeError } from '../../../../activities/llm/batch';

const policy = FlushPolicySchema.parse({ maxRequests: 3, maxBytes: 100, maxWaitSec: 60 });

describe('flush policy', () => {
  it('defaults to the Batch API limits and refuses more', () => {
    expect(FlushPolicySchema.parse({})).toEqual({ maxRequests: 50_000, maxBytes: 200 * 1024 * 1024, maxWaitSec: 600 });
    expect(BATCH_LIMITS).toMatchObject({ maxRequests: 50_000, maxRequestBytes: 209_715_200 });
    expect(() => FlushPolicySchema.parse({ maxRequests: 50_001 })).toThrow();
    expect(() => FlushPolicySchema.parse({ maxBytes: 200 * 1024 * 1024 + 1 })).toThrow();
    expect(() => FlushPolicySchema.parse({ maxWaitSec: 0 })).toThrow();
  });

  it('flushes at N requests', () => {
    let open = admit(null, 10, 0, policy).batch;
    open = admit(open, 10, 1, policy).batch;
    expect(flushDue(open, 1, policy)).toBeNull();
    open = admit(open, 10, 2, policy).batch;
    expect(open).toEqual({ requests: 3, bytes: 30, openedAt: 0 });
    expect(flushDue(open, 2, policy)).toBe('requests');
    expect(admit(open, 10, 3, policy)).toEqual({ flushFirst: 'requests', batch: { requests: 1, bytes: 10, openedAt: 3 } });
  });

  it('flushes before a line that would take the batch past its byte limit, and at the limit exactly', () => {
    const open = admit(null, 60, 0, policy).batch;
    expect(admit(open, 41, 5, policy)).toEqual({ flushFirst: 'bytes', batch: { requests: 1, bytes: 41, openedAt: 5 } });
    const full = admit(open, 40, 5, policy);
    expect(full.flushFirst).toBeNull();
    expect(flushDue(full.batch, 5, policy)).toBe('bytes');
  });

  it('flushes when the oldest request has waited T seconds, and says when that will be', () => {
    const open = admit(admit(null, 1, 1_000, policy).batch, 1, 50_000, policy).batch;
    expect(flushDueAt(open, policy)).toBe(61_000);
    expect(flushDue(open, 60_999, policy)).toBeNull();
    expect(flushDue(open, 61_000, policy)).toBe('age');
    expect(flushDue(null, 1e12, policy)).toBeNull();
    expect(flushDueAt(null, policy)).toBeNull();
  });

  it('refuses a request larger than a whole batch', () => {
    expect(() => admit(null, 101, 0, policy)).toThrow(RequestTooLargeError);
  });
});

describe('BatchAccumulator', () => {
  it('hands out batches in order on its injected clock', () => {
    const clock = { now: 0 };
    const acc = new BatchAccumulator<string>(policy, () => clock.now);
    expect(acc.add('a', 10)).toEqual([]);
    clock.now = 30_000;
    expect(acc.add('b', 10)).toEqual([]);
    expect(acc.takeDue()).toBeNull();
    expect(acc.nextDueAt()).toBe(60_000);
    expect(acc.add('c', 10)).toEqual([{ items: ['a', 'b', 'c'], reason: 'requests' }]);
    expect(acc.size).toBe(0);
    expect(acc.nextDueAt()).toBeNull();

    clock.now = 70_000;
    expect(acc.add('d', 90)).toEqual([]);
    // 'e' does not fit beside 'd': 'd' goes first, 'e' opens the next batch.
    expect(acc.add('e', 20)).toEqual([{ items: ['d'], reason: 'bytes' }]);
    clock.now = 129_999;
    expect(acc.takeDue()).toBeNull();
    clock.now = 130_000;
    expect(acc.takeDue()).toEqual({ items: ['e'], reason: 'age' });
    expect(acc.takeDue()).toBeNull();
  });

  it('flushes the batch a full-size line fills, after the one it could not join', () => {
    const acc = new BatchAccumulator<string>(policy, () => 0);
    acc.add('a', 50);
    expect(acc.add('b', 100)).toEqual([
      { items: ['a'], reason: 'bytes' },
      { items: ['b'], reason: 'bytes' },
    ]);
  });
});
