/** The gateway against scripted faults over HTTP, through the real openai client: each failure transient or permanent, with what to check. */
import * as fs from 'node:fs';
import { LocalStore } from '../../../activities/store/local';
import { LlmGateway, LlmPermanentError, LlmTransientError, parseCodeAnswer, renderPrompt, type ExchangeRecord } from '../../../activities/llm';
import { startScriptedLlmServer, type ScriptedLlmServer, type ScriptedResponse } from '../../../scripts/scripted-llm/server';
import { waitFor } from '../../support/processes';
import { storeFor, tempDataDir, testConfig } from './helpers';

/** Scripted answer (fixture). */
const GOOD = 'ok\n```python\ndef f():\n    return 1\n```';

describe('transient and permanent failures through the real openai client', () => {
  let server: ScriptedLlmServer | undefined;
  let dataDir: string;
  beforeEach(() => {
    dataDir = tempDataDir();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function gatewayWith(responses: ScriptedResponse[], opts: { apiKey?: string; timeoutSec?: number } = {}) {
    server = await startScriptedLlmServer({ rules: [{ kind: 'docstring', responses }] }, { apiKey: opts.apiKey });
    const config = testConfig(server.url, dataDir, { llm: { timeoutSec: opts.timeoutSec ?? 5 } });
    const gateway = new LlmGateway(config, storeFor(config));
    const call = () => gateway.chat({ step: 'docstring', functionId: 'fn-f', messages: renderPrompt('docstring', { functionName: 'f', code: 'def f():\n    return 1\n' }).messages });
    return { gateway, call, config };
  }

  async function failureOf(p: Promise<unknown>): Promise<Error> {
    try {
      await p;
    } catch (err) {
      return err as Error;
    }
    throw new Error('expected the call to fail');
  }

  it('429 is transient and carries Retry-After; the client does not retry on its own', async () => {
    const { call } = await gatewayWith([{ fault: '429', retryAfterSec: 7 }, GOOD]);
    const err = await failureOf(call());
    expect(err).toBeInstanceOf(LlmTransientError);
    expect((err as LlmTransientError).retryAfterMs).toBe(7000);
    expect((err as LlmTransientError).status).toBe(429);
    expect(server!.requests).toHaveLength(1);
    // The next attempt (Temporal's retry) gets the next scripted response.
    const ok = await call();
    expect(ok.text).toBe(GOOD);
    expect(server!.requests).toHaveLength(2);
  });

  it('500 is transient without a delay hint', async () => {
    const { call } = await gatewayWith([{ fault: '500' }]);
    const err = await failureOf(call());
    expect(err).toBeInstanceOf(LlmTransientError);
    expect((err as LlmTransientError).status).toBe(500);
    expect((err as LlmTransientError).retryAfterMs).toBeUndefined();
  });

  it('a reply slower than the request timeout is a transient timeout', async () => {
    const { call } = await gatewayWith([{ fault: 'slow', delayMs: 3000 }], { timeoutSec: 1 });
    const err = await failureOf(call());
    expect(err).toBeInstanceOf(LlmTransientError);
    expect(err.message).toMatch(/timed out/);
  });

  it('an aborted call (a cancelled activity) stops waiting for the answer', async () => {
    // The answer would come after 3 s and succeed; an abort once the server has the request must end the call with an abort instead.
    server = await startScriptedLlmServer({ rules: [{ kind: 'docstring', responses: [{ fault: 'slow', delayMs: 3000, text: 'too late' }] }] });
    const config = testConfig(server.url, dataDir);
    const gateway = new LlmGateway(config, storeFor(config));
    const controller = new AbortController();
    const call = failureOf(
      gateway.chat({ step: 'docstring', functionId: 'fn-f', messages: renderPrompt('docstring', { functionName: 'f', code: 'def f():\n    return 1\n' }).messages }, { signal: controller.signal }),
    );
    await waitFor('the request to reach the server', () => server!.requests.length === 1, 10_000, 10);
    controller.abort();
    const err = await call;
    expect(err).toBeInstanceOf(LlmTransientError);
    expect(err.message).toMatch(/aborted/);
    expect(server.requests).toHaveLength(1);
  });

  it('a malformed JSON body is transient', async () => {
    const { call } = await gatewayWith([{ fault: 'malformed' }]);
    const err = await failureOf(call());
    expect(err).toBeInstanceOf(LlmTransientError);
    expect(err.message).toMatch(/malformed|JSON/i);
  });

  it('a dropped connection is transient', async () => {
    const { call } = await gatewayWith([{ fault: 'reset' }]);
    const err = await failureOf(call());
    expect(err).toBeInstanceOf(LlmTransientError);
    expect(err.message).toMatch(/cannot reach|network/i);
  });

  it('a truncated answer is not an error: finish reason "length" reaches the parser, which reports it', async () => {
    const { call } = await gatewayWith([{ fault: 'truncated' }]);
    const out = await call();
    expect(out.finishReason).toBe('length');
    const parsed = parseCodeAnswer(out.text, out.finishReason);
    expect(parsed).toMatchObject({ ok: false, failure: 'truncated' });
  });

  it.each([
    ['400', 400, /malformed/],
    ['404', 404, /OPENAI_BASE_URL|model name/],
  ] as const)('HTTP %s is permanent with a message saying what to check', async (fault, status, hint) => {
    const { call } = await gatewayWith([{ fault }]);
    const err = await failureOf(call());
    expect(err).toBeInstanceOf(LlmPermanentError);
    expect((err as LlmPermanentError).status).toBe(status);
    expect(err.message).toMatch(hint);
  });

  it('a wrong API key is a permanent authentication failure', async () => {
    server = await startScriptedLlmServer({ rules: [], fallback: GOOD }, { apiKey: 'the-right-key' });
    const config = testConfig(server.url, dataDir); // sends test-key
    const err = await failureOf(new LlmGateway(config, storeFor(config)).chat({ step: 'solve', functionId: 'fn-f', messages: [{ role: 'user', content: 'hi' }] }));
    expect(err).toBeInstanceOf(LlmPermanentError);
    expect(err.message).toMatch(/authentication failed.*OPENAI_API_KEY/);
  });

  it('an unreachable endpoint is transient', async () => {
    const probe = await startScriptedLlmServer({ rules: [] });
    const url = probe.url;
    await probe.close();
    const config = testConfig(url, dataDir);
    const err = await failureOf(new LlmGateway(config, storeFor(config)).chat({ step: 'solve', functionId: 'fn-f', messages: [{ role: 'user', content: 'hi' }] }));
    expect(err).toBeInstanceOf(LlmTransientError);
  });

  it('an invalid request is refused before any HTTP call', async () => {
    const { gateway } = await gatewayWith([GOOD]);
    const err = await failureOf(gateway.chat({ step: 'solve', functionId: '', messages: [] }));
    expect(err).toBeInstanceOf(LlmPermanentError);
    expect(server!.requests).toHaveLength(0);
  });

  it('failed exchanges are recorded too, and never cached', async () => {
    const { call, config } = await gatewayWith([{ fault: '500' }, GOOD]);
    await failureOf(call());
    const ok = await call();
    expect(ok.cached).toBe(false);
    const index = await new LocalStore(dataDir).listExchanges('fn-f');
    expect(index).toHaveLength(2);
    expect(index[0]!.error).toMatch(/server error 500/);
    const failed = await storeFor(config).getJson<ExchangeRecord>(index[0]!.exchangeKey);
    expect(failed.response).toBeNull();
    expect(failed.error).toMatchObject({ kind: 'transient', status: 500 });
  });
});
