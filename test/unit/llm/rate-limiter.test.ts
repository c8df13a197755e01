/** The rate limiter on an injected clock: request and token budgets, and the cap on calls in flight. */
import { RateLimiter, TokenBucket } from '../../../activities/llm';
import { fakeClock } from '../../support/fake-clock';

describe('TokenBucket', () => {
  it('refills continuously and caps at the burst size', () => {
    let t = 0;
    const b = new TokenBucket(600, 1, () => t); // 10 per second, burst of 10
    expect(b.capacity).toBe(10);
    b.take(10);
    expect(b.waitFor(1)).toBe(100);
    t = 250;
    expect(b.available).toBeCloseTo(2.5);
    t = 10_000;
    expect(b.available).toBe(10);
  });

  it('lets a request bigger than the bucket through once the bucket is full, then owes the rest', () => {
    let t = 0;
    const b = new TokenBucket(6000, 1, () => t); // 100 tokens/s, capacity 100
    expect(b.waitFor(500)).toBe(0);
    b.take(500);
    expect(b.waitFor(500)).toBe(5000); // back to full takes (100 + 400) / 0.1
  });
});

describe('RateLimiter', () => {
  it('spaces requests to the requests-per-minute budget, per model', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ requestsPerMinute: 60 }, clock);
    const starts: number[] = [];
    for (let i = 0; i < 5; i++) {
      const p = await limiter.acquire('m', 10);
      starts.push(clock.t);
      p.settle(10);
    }
    expect(starts).toEqual([0, 1000, 2000, 3000, 4000]);
    // Another model has its own budget.
    const other = await limiter.acquire('other', 10);
    expect(other.waitedMs).toBe(0);
  });

  it('charges estimated tokens first and corrects them with the real count', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ tokensPerMinute: 6000 }, clock); // 100 tokens/s, burst 100
    const a = await limiter.acquire('m', 100);
    a.settle(20); // used far fewer than estimated: 80 refunded
    const b = await limiter.acquire('m', 80);
    expect(b.waitedMs).toBe(0);
    b.settle(80);
    const c = await limiter.acquire('m', 100);
    expect(c.waitedMs).toBe(1000);
    c.settle(300); // used more: the next caller pays for it
    const d = await limiter.acquire('m', 100);
    expect(d.waitedMs).toBe(3000);
  });

  it('caps calls in flight and hands freed slots out in arrival order', async () => {
    const limiter = new RateLimiter({ concurrency: 2 });
    const p1 = await limiter.acquire('m', 1);
    const p2 = await limiter.acquire('m', 1);
    const order: number[] = [];
    const w3 = limiter.acquire('m', 1).then((p) => (order.push(3), p));
    const w4 = limiter.acquire('m', 1).then((p) => (order.push(4), p));
    // Let every promise that could settle settle: neither waiter may have got a slot.
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    expect(limiter.inFlight).toBe(2);
    p1.settle();
    const p3 = await w3;
    expect(order).toEqual([3]);
    p2.settle();
    p2.settle(); // settling twice must not free two slots
    const p4 = await w4;
    expect(order).toEqual([3, 4]);
    expect(limiter.inFlight).toBe(2);
    p3.settle();
    p4.settle();
    expect(limiter.inFlight).toBe(0);
  });
});
