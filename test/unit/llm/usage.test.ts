/** Cost and usage accounting: the price table, totals and groupings, and the store's exchange index. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { estimateCostUsd } from '../../../activities/llm';
import { readCompletion } from '../../../activities/llm/completion';
import { promptCacheHit } from '../../../scripts/scripted-llm/server';
import { LocalStore, safeName } from '../../../activities/store/local';
import { sumUsage, usageBy, type UsageEntry } from '../../../activities/store/usage';

const tempDataDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'repost-usage-'));

describe('cost and usage accounting', () => {
  it('prices calls from the table and leaves unknown models at zero', () => {
    const prices = { m: { inputPerMTok: 2, outputPerMTok: 8 } };
    expect(estimateCostUsd(prices, 'm', 1_000_000, 500_000)).toBe(6);
    expect(estimateCostUsd(prices, 'unknown', 1000, 1000)).toBe(0);
  });

  it("prices the prompt tokens the endpoint's prompt cache served at the cached price, live and in a batch", () => {
    const prices = { m: { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 }, plain: { inputPerMTok: 2, outputPerMTok: 8 } };
    // 1M prompt tokens of which 400k cached, 100k completion.
    expect(estimateCostUsd(prices, 'm', 1_000_000, 100_000, 'live', 400_000)).toBeCloseTo(0.6 * 2 + 0.4 * 0.5 + 0.1 * 8, 12);
    expect(estimateCostUsd(prices, 'm', 1_000_000, 100_000, 'batch', 400_000)).toBeCloseTo(0.6 * 1 + 0.4 * 0.25 + 0.1 * 4, 12);
    // Without a cached price, cached tokens cost what the others do; more cached than prompt tokens is capped.
    expect(estimateCostUsd(prices, 'plain', 1_000_000, 0, 'live', 400_000)).toBe(estimateCostUsd(prices, 'plain', 1_000_000, 0));
    expect(estimateCostUsd(prices, 'm', 1000, 0, 'live', 5000)).toBeCloseTo((1000 * 0.5) / 1e6, 12);
  });

  it("reads cached_tokens from a completion's usage, and sums them", () => {
    const body = { choices: [{ message: { content: 'x' }, finish_reason: 'stop' }], usage: { prompt_tokens: 2000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 1536 } } };
    expect(readCompletion(body, 'test').usage).toEqual({ promptTokens: 2000, completionTokens: 10, cachedPromptTokens: 1536 });
    expect(readCompletion({ ...body, usage: { prompt_tokens: 5, completion_tokens: 1 } }, 'test').usage).toEqual({ promptTokens: 5, completionTokens: 1, cachedPromptTokens: 0 });
    const base = { cached: false, completionTokens: 1, costUsd: 0 };
    expect(sumUsage([{ ...base, promptTokens: 10, cachedPromptTokens: 4 }, { ...base, promptTokens: 10 }]).cachedPromptTokens).toBe(4);
  });

  it("the scripted endpoint's prompt cache: a prefix shared with an earlier prompt, from the minimum on, in steps", () => {
    const seen = new Map<string, string[]>();
    const opts = { minTokens: 8, stepTokens: 4 };
    const shared = 'x'.repeat(4 * 21); // 21 tokens
    expect(promptCacheHit(seen, 'm', `${shared}first`, opts)).toBe(0);
    expect(promptCacheHit(seen, 'm', `${shared}second`, opts)).toBe(20);
    expect(promptCacheHit(seen, 'other', `${shared}second`, opts)).toBe(0);
    expect(promptCacheHit(seen, 'm', 'x'.repeat(4 * 7), opts)).toBe(0);
  });

  it('sums usage and groups it by function, repository and run', () => {
    const entries: UsageEntry[] = [
      { functionId: 'f1', repoId: 'r1', runId: 'run', cached: false, promptTokens: 100, completionTokens: 10, costUsd: 0.5, latencyMs: 20 },
      { functionId: 'f1', repoId: 'r1', runId: 'run', cached: true, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyMs: 1 },
      { functionId: 'f2', repoId: 'r2', runId: 'run', cached: false, promptTokens: 50, completionTokens: 5, costUsd: 0.25, latencyMs: 30 },
    ];
    expect(sumUsage(entries)).toEqual({ calls: 3, cachedCalls: 1, promptTokens: 150, cachedPromptTokens: 0, completionTokens: 15, costUsd: 0.75, latencyMs: 51 });
    const byFunction = usageBy(entries, 'functionId');
    expect(byFunction.get('f1')).toMatchObject({ calls: 2, cachedCalls: 1, promptTokens: 100 });
    expect(byFunction.get('f2')).toMatchObject({ calls: 1, promptTokens: 50 });
    expect(usageBy(entries, 'repoId').get('r2')!.costUsd).toBe(0.25);
    expect(usageBy(entries, 'runId').get('run')!.calls).toBe(3);
  });

  it('skips a torn last line in the index, and keeps lines of other functions out', async () => {
    const dataDir = tempDataDir();
    try {
      const line = (functionId: string) =>
        JSON.stringify({ exchangeKey: 'sha256-' + '0'.repeat(64), step: 'tests', model: 'm', cached: false, promptTokens: 1, completionTokens: 1, costUsd: 0, latencyMs: 1, functionId, recordedAt: 'now' });
      // The index file of 'a/b', holding a stray line of 'a:b' and a torn last line.
      const file = path.join(dataDir, 'llm-index', `${safeName('a/b')}.jsonl`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `${line('a/b')}\n${line('a:b')}\n{"exchangeKey": "sha256-tor`);
      expect((await new LocalStore(dataDir).listExchanges('a/b')).map((e) => e.functionId)).toEqual(['a/b']);
      expect(await new LocalStore(dataDir).listExchanges('nothing-here')).toEqual([]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
