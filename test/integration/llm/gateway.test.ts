import * as fs from 'node:fs';
import { LocalStore } from '../../../activities/store/local';
import { LlmGateway, renderPrompt, type ExchangeRecord } from '../../../activities/llm';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../../../scripts/scripted-llm/server';
import { storeFor, tempDataDir, testConfig } from './helpers';

/** Scripted responses (fixtures, not model output). */
const SANDBOX_ANSWER_1 = 'Reasoning: kept as is.\n\n```python\ndef add(a, b):\n    return a + b\n```\n';
const SANDBOX_ANSWER_2 = 'Second try.\n\n```python\ndef add(a, b):\n    return b + a\n```\n';

describe('LlmGateway against the scripted server over HTTP', () => {
  let server: ScriptedLlmServer;
  let dataDir: string;

  beforeEach(async () => {
    dataDir = tempDataDir();
    server = await startScriptedLlmServer({
      rules: [
        { kind: 'sandbox', functionName: 'add', responses: [SANDBOX_ANSWER_1, SANDBOX_ANSWER_2] },
        { kind: 'tests', responses: ['```python\ndef test_{{functionName}}():\n    assert True\n```'] },
      ],
    });
  });
  afterEach(async () => {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const sandboxPrompt = () => renderPrompt('sandbox', { functionName: 'add', filePath: 'pkg/math.py', context: '## pkg/math.py\ndef add(a, b):\n    return a + b\n' });

  it('returns the text, usage and cost, and records the exchange under the function id', async () => {
    const config = testConfig(server.url, dataDir);
    const gateway = new LlmGateway(config, storeFor(config));
    const p = sandboxPrompt();
    const out = await gateway.chat({ step: 'sandbox', functionId: 'fn-add', runId: 'run-1', repoId: 'repo-1', messages: p.messages, promptId: p.promptId, promptVersion: p.promptVersion });

    expect(out.text).toBe(SANDBOX_ANSWER_1);
    expect(out.cached).toBe(false);
    expect(out.finishReason).toBe('stop');
    expect(out.model).toBe('gpt-4o');
    expect(out.promptTokens).toBeGreaterThan(50);
    expect(out.completionTokens).toBe(Math.ceil(SANDBOX_ANSWER_1.length / 4));
    expect(out.costUsd).toBeCloseTo((out.promptTokens * 2.5 + out.completionTokens * 10) / 1e6, 12);

    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.kind).toBe('sandbox');
    expect(server.requests[0]!.functionName).toBe('add');
    expect(server.requests[0]!.headers['x-repost-function-id']).toBe('fn-add');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer test-key');

    const record = await storeFor(config).getJson<ExchangeRecord>(out.exchangeKey);
    expect(record.response?.text).toBe(SANDBOX_ANSWER_1);
    expect(record.request.messages).toEqual(p.messages);
    expect(record.promptVersion).toBe(p.promptVersion);
    expect(record.promptVersion).toMatch(/^\d+$/);
    expect(record.step).toBe('sandbox');

    const index = await new LocalStore(dataDir).listExchanges('fn-add');
    expect(index).toHaveLength(1);
    expect(index[0]).toMatchObject({ exchangeKey: out.exchangeKey, step: 'sandbox', cached: false, runId: 'run-1', repoId: 'repo-1', promptId: 'sandbox' });
  });

  it('records which checks refused an answer, for fresh answers and cache hits alike', async () => {
    const config = testConfig(server.url, dataDir);
    const gateway = new LlmGateway(config, storeFor(config));
    const req = { step: 'sandbox' as const, functionId: 'fn-add', runId: 'run-r', messages: sandboxPrompt().messages };
    const seen: string[] = [];
    const refuse = (a: { text: string }) => (seen.push(a.text), ['target_not_shrunk', 'parses', 'parses']);
    const fresh = await gateway.chat(req, { review: refuse });
    // The same answer from the cache, reviewed under another rule that accepts it.
    const hit = await gateway.chat(req, { review: () => [] });
    const unreviewed = await gateway.chat(req);
    expect(seen).toEqual([SANDBOX_ANSWER_1]);
    expect(hit.cached).toBe(true);

    const index = await new LocalStore(dataDir).listExchanges('fn-add');
    expect(index.map((e) => e.refusedBy)).toEqual([['target_not_shrunk', 'parses'], [], undefined]);
    expect((await storeFor(config).getJson<ExchangeRecord>(fresh.exchangeKey)).refusedBy).toEqual(['target_not_shrunk', 'parses']);
    expect((await storeFor(config).getJson<ExchangeRecord>(unreviewed.exchangeKey)).refusedBy).toBeUndefined();
    const refusals = await new LocalStore(dataDir).runRefusals('run-r');
    expect(refusals).toMatchObject({ calls: 1, reviewed: 2, byCheck: { target_not_shrunk: { calls: 1 }, parses: { calls: 1 } } });
    expect(refusals.promptTokens).toBe(fresh.promptTokens);
  });

  it('leaves an answer unmarked when its review throws', async () => {
    const config = testConfig(server.url, dataDir);
    const gateway = new LlmGateway(config, storeFor(config));
    await gateway.chat({ step: 'sandbox', functionId: 'fn-add', messages: sandboxPrompt().messages }, { review: () => { throw new Error('bug'); } });
    expect((await new LocalStore(dataDir).listExchanges('fn-add'))[0]!.refusedBy).toBeUndefined();
  });

  it('answers a repeated temperature-0 request from the cache at zero tokens, and records the hit', async () => {
    const config = testConfig(server.url, dataDir);
    const gateway = new LlmGateway(config, storeFor(config));
    const req = { step: 'sandbox' as const, functionId: 'fn-add', messages: sandboxPrompt().messages };
    const first = await gateway.chat(req);
    const second = await gateway.chat(req);
    // A fresh gateway over the same data directory (a re-run) hits too.
    const third = await new LlmGateway(config, storeFor(config)).chat(req);

    expect(server.requests).toHaveLength(1);
    for (const hit of [second, third]) {
      expect(hit).toMatchObject({ text: first.text, cached: true, promptTokens: 0, completionTokens: 0, costUsd: 0 });
      expect(hit.exchangeKey).not.toBe(first.exchangeKey);
    }
    const index = await new LocalStore(dataDir).listExchanges('fn-add');
    expect(index.map((e) => e.cached)).toEqual([false, true, true]);
    const hitRecord = await storeFor(config).getJson<ExchangeRecord>(second.exchangeKey);
    expect(hitRecord.sourceExchangeKey).toBe(first.exchangeKey);
  });

  it('asks again for a regeneration attempt and walks through the scripted responses in order', async () => {
    const config = testConfig(server.url, dataDir);
    const gateway = new LlmGateway(config, storeFor(config));
    const messages = sandboxPrompt().messages;
    const a0 = await gateway.chat({ step: 'sandbox', functionId: 'fn-add', messages });
    const a1 = await gateway.chat({ step: 'sandbox', functionId: 'fn-add', messages, attempt: 1 });
    const a2 = await gateway.chat({ step: 'sandbox', functionId: 'fn-add', messages, attempt: 2 });
    expect([a0.text, a1.text, a2.text]).toEqual([SANDBOX_ANSWER_1, SANDBOX_ANSWER_2, SANDBOX_ANSWER_2]);
    expect([a0.cached, a1.cached, a2.cached]).toEqual([false, false, false]);
  });

  it('sends identical concurrent requests to the model once and answers the others from the cache', async () => {
    const config = testConfig(server.url, dataDir);
    const gateway = new LlmGateway(config, storeFor(config));
    const req = { step: 'sandbox' as const, functionId: 'fn-add', messages: sandboxPrompt().messages };
    const outs = await Promise.all([gateway.chat(req), gateway.chat(req), gateway.chat(req)]);
    expect(server.requests).toHaveLength(1);
    expect(outs.map((o) => o.cached).sort()).toEqual([false, true, true]);
    expect(new Set(outs.map((o) => o.text)).size).toBe(1);
  });

  it('does not cache above temperature 0 unless configured to', async () => {
    const plain = testConfig(server.url, dataDir);
    const req = { step: 'sandbox' as const, functionId: 'fn-add', messages: sandboxPrompt().messages, temperature: 0.8 };
    const g1 = new LlmGateway(plain, storeFor(plain));
    await g1.chat(req);
    const again = await g1.chat(req);
    expect(again.cached).toBe(false);
    expect(server.requests).toHaveLength(2);

    const optIn = testConfig(server.url, dataDir, { llm: { cache: { aboveZeroTemperature: true } } });
    const g2 = new LlmGateway(optIn, storeFor(optIn));
    await g2.chat(req);
    expect((await g2.chat(req)).cached).toBe(true);
    expect(server.requests).toHaveLength(3);
  });

  it('does not cache at all when the cache is disabled', async () => {
    const config = testConfig(server.url, dataDir, { llm: { cache: { enabled: false } } });
    const gateway = new LlmGateway(config, storeFor(config));
    const req = { step: 'sandbox' as const, functionId: 'fn-add', messages: sandboxPrompt().messages };
    await gateway.chat(req);
    expect((await gateway.chat(req)).cached).toBe(false);
    expect(server.requests).toHaveLength(2);
  });

  it('uses the model configured for the step, and the request can override it', async () => {
    const config = testConfig(server.url, dataDir, { llm: { models: { tests: 'gpt-4o-mini' } } });
    const gateway = new LlmGateway(config, storeFor(config));
    const messages = renderPrompt('tests', { functionName: 'add', script: 'def add(a, b):\n    return a + b\n' }).messages;
    const out = await gateway.chat({ step: 'tests', functionId: 'fn-add', messages });
    expect(out.model).toBe('gpt-4o-mini');
    expect(out.text).toContain('def test_add():');
    expect(out.costUsd).toBeCloseTo((out.promptTokens * 0.15 + out.completionTokens * 0.6) / 1e6, 12);
    const other = await gateway.chat({ step: 'tests', functionId: 'fn-add', messages, model: 'local-model' });
    expect(other.model).toBe('local-model');
    expect(other.costUsd).toBe(0);
    expect(server.requests.map((r) => r.model)).toEqual(['gpt-4o-mini', 'local-model']);
  });
});
