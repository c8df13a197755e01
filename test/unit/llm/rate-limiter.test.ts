import * as fs from 'node:fs';
import { LlmGateway, RateLimiter, TokenBucket } from '../../../activities/llm';
import type { LimiterClock } from '../../../activities/llm/rate-limiter';
import { startScriptedLlmServer } from '../../../scripts/lib/scripted-llm-server';
import { storeFor, tempDataDir, testConfig } from './helpers';

/** A clock that only moves when someone sleeps, so limiter timing is exact and instant. */
function fakeClock(): LimiterClock & { t: number } {
  const clock = {
    t: 0,
    now: () => clock.t,
    sleep: async (ms: number) => {
      clock.t += ms;
    },
  };
  return clock;
}

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
    await new Promise((r) => setTimeout(r, 20));
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

describe('rate limiting through the gateway', () => {
  it('bounds the request rate of real HTTP calls to the configured requests per minute', async () => {
    const dataDir = tempDataDir();
    const server = await startScriptedLlmServer({ rules: [], fallback: 'scripted answer' });
    try {
      // 1200/min = 20 per second with a burst of 20: 60 calls need about (60 - 20) / 20 = 2 s.
      const config = testConfig(server.url, dataDir, { llm: { requestsPerMinute: 1200, cache: { enabled: false } } });
      const gateway = new LlmGateway(config, storeFor(config), { record: false });
      const started = performance.now();
      await Promise.all(
        Array.from({ length: 60 }, (_, i) => gateway.chat({ step: 'solve', functionId: `fn-${i}`, messages: [{ role: 'user', content: `call ${i}` }] })),
      );
      const seconds = (performance.now() - started) / 1000;
      expect(server.requests).toHaveLength(60);
      expect(seconds).toBeGreaterThan(1.8);
      expect(seconds).toBeLessThan(4);
    } finally {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('spaces large prompts to the tokens-per-minute budget, corrected by the reported usage', async () => {
    const dataDir = tempDataDir();
    const server = await startScriptedLlmServer({ rules: [], fallback: 'ok' });
    try {
      // 60000/min = 1000 tokens per second, burst 1000. Each prompt is about 2000 tokens, so the
      // first goes at once and drives the bucket to about -1000; the next waits about 2 s.
      const config = testConfig(server.url, dataDir, { llm: { tokensPerMinute: 60_000, cache: { enabled: false } } });
      const gateway = new LlmGateway(config, storeFor(config), { record: false });
      const big = (i: number) => [{ role: 'user' as const, content: `${i} ` + 'x'.repeat(8000) }];
      const outs = await Promise.all([0, 1].map((i) => gateway.chat({ step: 'solve', functionId: `fn-${i}`, messages: big(i) })));
      expect(outs.every((o) => o.promptTokens >= 2000)).toBe(true);
      const gap = server.requests[1]!.receivedAt - server.requests[0]!.receivedAt;
      expect(gap).toBeGreaterThanOrEqual(1800);
      expect(gap).toBeLessThan(3500);
    } finally {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('never has more calls in flight than the concurrency cap', async () => {
    const dataDir = tempDataDir();
    const server = await startScriptedLlmServer({ rules: [], fallback: 'ok' }, { latencyMs: 200 });
    try {
      const config = testConfig(server.url, dataDir, { llm: { cache: { enabled: false } } });
      const gateway = new LlmGateway(config, storeFor(config), { record: false, concurrency: 2 });
      let peak = 0;
      const watch = setInterval(() => (peak = Math.max(peak, gateway.limiter.inFlight)), 5);
      const started = performance.now();
      await Promise.all(Array.from({ length: 6 }, (_, i) => gateway.chat({ step: 'solve', functionId: `fn-${i}`, messages: [{ role: 'user', content: `q${i}` }] })));
      clearInterval(watch);
      // Six calls of 200 ms, two at a time: three waves.
      expect(performance.now() - started).toBeGreaterThanOrEqual(590);
      expect(peak).toBe(2);
    } finally {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
