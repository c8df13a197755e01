/** Usage accounted from real calls: the exchange index the store keeps adds up to what the calls returned. */
import * as fs from 'node:fs';
import { LlmGateway } from '../../../activities/llm';
import { LocalStore } from '../../../activities/store/local';
import { sumUsage, usageBy } from '../../../activities/store/usage';
import { startScriptedLlmServer } from '../../../scripts/scripted-llm/server';
import { storeFor, tempDataDir, testConfig } from './helpers';

describe('usage of real calls', () => {
  it('accounts real calls from the exchange index, with cache hits at zero cost', async () => {
    const dataDir = tempDataDir();
    const server = await startScriptedLlmServer({ rules: [], fallback: 'scripted answer for accounting' });
    try {
      const config = testConfig(server.url, dataDir);
      const gateway = new LlmGateway(config, storeFor(config));
      const outcomes = [];
      for (const [fn, repo] of [['f1', 'r1'], ['f1', 'r1'], ['f2', 'r1'], ['f3', 'r2']] as const) {
        outcomes.push(await gateway.chat({ step: 'docstring', functionId: fn, repoId: repo, runId: 'run-7', messages: [{ role: 'user', content: `document ${fn}` }] }));
      }
      expect(outcomes.map((o) => o.cached)).toEqual([false, true, false, false]);
      const all = [];
      for await (const e of new LocalStore(dataDir).listRunExchanges('run-7')) all.push(e);
      expect(all).toHaveLength(4);
      const fromIndex = sumUsage(all);
      const fromOutcomes = sumUsage(outcomes);
      expect(fromIndex.promptTokens).toBe(fromOutcomes.promptTokens);
      expect(fromIndex.costUsd).toBeCloseTo(fromOutcomes.costUsd, 12);
      expect(fromIndex.cachedCalls).toBe(1);
      const byRepo = usageBy(all, 'repoId');
      expect(byRepo.get('r1')!.calls).toBe(3);
      expect(byRepo.get('r2')!.calls).toBe(1);
      expect(usageBy(all, 'runId').get('run-7')!.calls).toBe(4);
    } finally {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
