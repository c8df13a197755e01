/** Cost and usage accounting: the price table, totals and groupings, and the store's exchange index. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { estimateCostUsd } from '../../../activities/llm';
import { LocalStore, safeName } from '../../../activities/store/local';
import { sumUsage, usageBy, type UsageEntry } from '../../../activities/store/usage';

const tempDataDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'repost-usage-'));

describe('cost and usage accounting', () => {
  it('prices calls from the table and leaves unknown models at zero', () => {
    const prices = { m: { inputPerMTok: 2, outputPerMTok: 8 } };
    expect(estimateCostUsd(prices, 'm', 1_000_000, 500_000)).toBe(6);
    expect(estimateCostUsd(prices, 'unknown', 1000, 1000)).toBe(0);
  });

  it('sums usage and groups it by function, repository and run', () => {
    const entries: UsageEntry[] = [
      { functionId: 'f1', repoId: 'r1', runId: 'run', cached: false, promptTokens: 100, completionTokens: 10, costUsd: 0.5, latencyMs: 20 },
      { functionId: 'f1', repoId: 'r1', runId: 'run', cached: true, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyMs: 1 },
      { functionId: 'f2', repoId: 'r2', runId: 'run', cached: false, promptTokens: 50, completionTokens: 5, costUsd: 0.25, latencyMs: 30 },
    ];
    expect(sumUsage(entries)).toEqual({ calls: 3, cachedCalls: 1, promptTokens: 150, completionTokens: 15, costUsd: 0.75, latencyMs: 51 });
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
