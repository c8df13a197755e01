import * as fs from 'node:fs';
import { setTimeout as realDelay } from 'node:timers/promises';
import { Agent, fetch as undiciFetch, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from 'undici';
import { LocalStore } from '../../../activities/store/local';
import { LlmGateway, renderPrompt, type ExchangeRecord } from '../../../activities/llm';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../../../scripts/scripted-llm/server';
import { storeFor, tempDataDir, testConfig } from './helpers';

/** A scripted answer (a fixture, not model output). */
const SLOW_ANSWER = 'Reasoning: kept.\n\n```python\ndef add(a, b):\n    return a + b\n```\n';

const MINUTE = 60_000;

/**
 * An endpoint that needs six minutes to answer, on a fake clock.
 *
 * The process's `fetch` is, for this test, npm undici's with a dispatcher holding undici's own
 * defaults (headers and body timeouts of 300 s): the same client Node's built-in `fetch` is, but
 * loaded inside the test so that the fake clock drives its timers. A client that relies on the
 * process's default HTTP agent is cut at five (fake) minutes; the gateway's own agent, whose
 * timeouts follow `llm.timeoutSec`, waits for the answer. The scripted server's latency runs on the
 * same fake clock, so the six minutes take a second or two.
 */
describe('an answer slower than five minutes', () => {
  let server: ScriptedLlmServer;
  let dataDir: string;
  let savedFetch: typeof globalThis.fetch;
  let savedDispatcher: Dispatcher;
  let processDefault: Agent;

  beforeEach(async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    dataDir = tempDataDir();
    savedFetch = globalThis.fetch;
    savedDispatcher = getGlobalDispatcher();
    processDefault = new Agent();
    setGlobalDispatcher(processDefault);
    globalThis.fetch = undiciFetch as unknown as typeof globalThis.fetch;
    server = await startScriptedLlmServer({ rules: [{ kind: 'sandbox', responses: [SLOW_ANSWER] }] }, { latencyMs: 6 * MINUTE });
  });
  afterEach(async () => {
    globalThis.fetch = savedFetch;
    setGlobalDispatcher(savedDispatcher);
    await server.close();
    await processDefault.destroy();
    jest.useRealTimers();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

  /**
   * Lets the request reach the server (real I/O, the clock standing still), then moves the fake
   * clock a second at a time, letting real I/O happen in between, until the server has answered
   * or the client has given up; then waits (real time) for the gateway to record the outcome.
   */
  async function settle<T>(p: Promise<T>, limitMs: number): Promise<{ value?: T; error?: unknown; fakeMsWhenServerAnswered: number | null }> {
    let done = false;
    const outcome = p.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    void outcome.then(() => (done = true));
    for (let i = 0; !done && server.requests.length === 0 && i < 10_000; i++) await turn();
    if (server.requests.length === 0) throw new Error('the request never reached the server');
    let elapsedMs = 0;
    while (!done && server.requests[0]!.status === 0 && elapsedMs < limitMs) {
      for (let i = 0; i < 5; i++) await turn();
      await jest.advanceTimersByTimeAsync(1000);
      elapsedMs += 1000;
    }
    const fakeMsWhenServerAnswered = server.requests[0]!.status === 0 ? null : elapsedMs;
    // A real-time bound on the recording, cancelled once it is done (a pending timer would keep jest's worker alive).
    const bound = new AbortController();
    const settled = await Promise.race([outcome, realDelay(30_000, undefined, { signal: bound.signal }).then(() => undefined, () => undefined)]);
    bound.abort();
    if (!settled) throw new Error(`the request neither answered nor failed within ${limitMs} ms of fake time`);
    return { ...settled, fakeMsWhenServerAnswered };
  }

  it('is answered: one request, one answer, no retry', async () => {
    const config = testConfig(server.url, dataDir, { llm: { timeoutSec: 90 * 60 } });
    const gateway = new LlmGateway(config, storeFor(config));
    const p = renderPrompt('sandbox', { functionName: 'add', filePath: 'pkg/math.py', context: '## pkg/math.py\ndef add(a, b):\n    return a + b\n' });
    const outcome = await settle(gateway.chat({ step: 'sandbox', functionId: 'fn-add', messages: p.messages }), 10 * MINUTE);

    expect(outcome.error).toBeUndefined();
    expect(outcome.value?.text).toBe(SLOW_ANSWER);
    // The answer came after the server's six minutes, not before: the wait really happened.
    expect(outcome.fakeMsWhenServerAnswered).toBeGreaterThanOrEqual(6 * MINUTE);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.reply).toBe('text');
    const record = await storeFor(config).getJson<ExchangeRecord>(outcome.value!.exchangeKey);
    expect(record.error).toBeUndefined();
    expect(record.latencyMs).toBeGreaterThanOrEqual(6 * MINUTE);
  });

  it('follows the run’s LLM timeout, not the process’s', async () => {
    // The worker's own configuration says 5 s; the run that calls allows 90 minutes.
    const config = testConfig(server.url, dataDir, { llm: { timeoutSec: 5 } });
    const gateway = new LlmGateway(config, storeFor(config));
    const p = renderPrompt('sandbox', { functionName: 'add', filePath: 'pkg/math.py', context: '## pkg/math.py\ndef add(a, b):\n    return a + b\n' });
    const runLlm = { ...config.llm, timeoutSec: 90 * 60 };
    const outcome = await settle(gateway.chat({ step: 'sandbox', functionId: 'fn-add', messages: p.messages }, { llm: runLlm }), 10 * MINUTE);
    expect(outcome.error).toBeUndefined();
    expect(outcome.value?.text).toBe(SLOW_ANSWER);
    expect(server.requests).toHaveLength(1);
  });

  it('still ends at the LLM timeout when the answer is slower than that', async () => {
    const config = testConfig(server.url, dataDir, { llm: { timeoutSec: 4 * 60 } });
    const gateway = new LlmGateway(config, storeFor(config));
    const p = renderPrompt('sandbox', { functionName: 'add', filePath: 'pkg/math.py', context: '## pkg/math.py\ndef add(a, b):\n    return a + b\n' });
    const outcome = await settle(gateway.chat({ step: 'sandbox', functionId: 'fn-add', messages: p.messages }), 10 * MINUTE);

    expect(String((outcome.error as Error | undefined)?.message)).toMatch(/timed out after 240 s \(llm\.timeoutSec\)/);
    expect(server.requests).toHaveLength(1);
    const [exchange] = await new LocalStore(dataDir).listExchanges('fn-add');
    expect(exchange!.error).toMatch(/timed out/);
    expect(exchange!.latencyMs).toBeGreaterThanOrEqual(4 * MINUTE);
    expect(exchange!.latencyMs).toBeLessThan(6 * MINUTE);
  });
});
