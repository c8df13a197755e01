/**
 * Rate limiting of real HTTP calls through the gateway: the gateway's limiter runs on an injected
 * clock, so the waits it imposes are exact and read from the clock, never measured.
 */
import * as fs from 'node:fs';
import { LlmGateway, RateLimiter } from '../../../activities/llm';
import { startScriptedLlmServer } from '../../../scripts/scripted-llm/server';
import { fakeClock } from '../../support/fake-clock';
import { storeFor, tempDataDir, testConfig } from './helpers';

describe('rate limiting through the gateway', () => {
  it('spaces real HTTP calls to the configured requests per minute', async () => {
    const dataDir = tempDataDir();
    const server = await startScriptedLlmServer({ rules: [], fallback: 'scripted answer' });
    try {
      // 1200/min = 20 per second with a burst of 20: the other 40 of 60 calls wait 50 ms each.
      const config = testConfig(server.url, dataDir, { llm: { cache: { enabled: false } } });
      const clock = fakeClock();
      const gateway = new LlmGateway(config, storeFor(config), { record: false, rateLimiter: new RateLimiter({ requestsPerMinute: 1200 }, clock) });
      await Promise.all(
        Array.from({ length: 60 }, (_, i) => gateway.chat({ step: 'solve', functionId: `fn-${i}`, messages: [{ role: 'user', content: `call ${i}` }] })),
      );
      expect(server.requests).toHaveLength(60);
      expect(clock.t).toBe(40 * 50);
    } finally {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('spaces large prompts to the tokens-per-minute budget, corrected by the reported usage', async () => {
    const dataDir = tempDataDir();
    const server = await startScriptedLlmServer({ rules: [], fallback: 'ok' });
    try {
      // 60000/min = 1000 tokens per second (1 per ms), burst 1000. Each prompt is about 2000
      // tokens: the first goes at once and drives the bucket to 1000 minus what it really used;
      // the second waits until the bucket is full again, one ms per token the first used.
      const config = testConfig(server.url, dataDir, { llm: { cache: { enabled: false } } });
      const clock = fakeClock();
      const gateway = new LlmGateway(config, storeFor(config), { record: false, rateLimiter: new RateLimiter({ tokensPerMinute: 60_000 }, clock) });
      const big = (i: number) => [{ role: 'user' as const, content: `${i} ` + 'x'.repeat(8000) }];
      const first = await gateway.chat({ step: 'solve', functionId: 'fn-0', messages: big(0) });
      expect(first.promptTokens).toBeGreaterThanOrEqual(2000);
      expect(clock.t).toBe(0);
      await gateway.chat({ step: 'solve', functionId: 'fn-1', messages: big(1) });
      expect(clock.t).toBe(first.promptTokens + first.completionTokens);
      expect(server.requests).toHaveLength(2);
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
      await Promise.all(Array.from({ length: 6 }, (_, i) => gateway.chat({ step: 'solve', functionId: `fn-${i}`, messages: [{ role: 'user', content: `q${i}` }] })));
      clearInterval(watch);
      // Six calls of 200 ms, two at a time: the cap was reached, never passed.
      expect(peak).toBe(2);
      expect(server.requests).toHaveLength(6);
    } finally {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
