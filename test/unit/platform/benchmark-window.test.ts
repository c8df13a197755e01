import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openBenchmarkRun } from '../../../activities/benchmark/open-run';
import { IsoDaySchema, benchmarkRunId, benchmarkWindow } from '../../../activities/benchmark/window';
import { pipelineSettingsFrom } from '../../../activities/run-settings';
import { LocalStore } from '../../../activities/store/local';
import { crawlWorkflowBudgetMs, repoWorkflowBudgetMs, stepsBudgetMs } from '../../../activities/workflow-budgets';
import { loadConfig } from '../../../temporal.config';

const DAY = 86_400_000;

describe('live benchmark windows', () => {
  it('a firing covers the days since the previous firing, without its own day', () => {
    const fired = new Date('2025-03-31T00:00:00Z');
    expect(benchmarkWindow(fired, 30 * DAY, '2024-09-01')).toEqual({ from: '2025-03-01', to: '2025-03-30' });
    // The next firing starts where this one ended: every day is searched once.
    expect(benchmarkWindow(new Date(fired.getTime() + 30 * DAY), 30 * DAY, '2024-09-01')).toEqual({ from: '2025-03-31', to: '2025-04-29' });
  });

  it('never reaches before the cutoff, and is empty when it lies before it', () => {
    expect(benchmarkWindow(new Date('2024-09-10T12:00:00Z'), 30 * DAY, '2024-09-01')).toEqual({ from: '2024-09-01', to: '2024-09-10' });
    expect(benchmarkWindow(new Date('2024-08-15T00:00:00Z'), 30 * DAY, '2024-09-01')).toBeNull();
  });

  it('a period under a day searches the current day', () => {
    expect(benchmarkWindow(new Date('2025-05-05T10:00:05Z'), 5000, '2025-01-01')).toEqual({ from: '2025-05-05', to: '2025-05-05' });
  });

  it('run ids follow the firing time, the same on a retry', () => {
    const at = new Date('2025-05-05T10:00:05.123Z');
    expect(benchmarkRunId('repost-benchmark-eval', at)).toBe('repost-benchmark-eval-20250505-100005');
    expect(benchmarkRunId('repost-benchmark-eval', new Date(at))).toBe(benchmarkRunId('repost-benchmark-eval', at));
  });

  it('cutoffs are calendar days', () => {
    expect(IsoDaySchema.safeParse('2024-09-01').success).toBe(true);
    expect(IsoDaySchema.safeParse('2024-13-45').success).toBe(false);
    expect(IsoDaySchema.safeParse('2023-02-29').success).toBe(false);
    expect(IsoDaySchema.safeParse('09/01/2024').success).toBe(false);
  });
});

describe("a live benchmark firing's crawl", () => {
  const MARGIN = 5 * 60_000;

  it('has a time limit: its repositories in waves of the repository window, or the configured one', () => {
    const settings = pipelineSettingsFrom(loadConfig({ env: {} }));
    const t = settings.timeouts;
    expect(t.crawlWorkflowMs).toBeUndefined();
    expect(t.repoWorkflowMs).toBe(repoWorkflowBudgetMs(t, settings, settings));
    // 9 repositories, 4 at a time: 3 waves of a repository's limit and an outcome write; 2 pages of sources, the summary and the files.
    expect(crawlWorkflowBudgetMs(settings, 9)).toBe(4 * (t.ioMs + MARGIN) + 3 * (t.repoWorkflowMs! + t.ioMs + MARGIN));
    expect(crawlWorkflowBudgetMs(settings, 0)).toBe(stepsBudgetMs(t, { io: 3, llm: 0, sandbox: 0 }));
    const set = pipelineSettingsFrom(loadConfig({ env: { REPOST_TEMPORAL_CHILD_TIMEOUT_SEC_CRAWL: '3600' } }));
    expect(set.timeouts.crawlWorkflowMs).toBe(3_600_000);
    expect(crawlWorkflowBudgetMs(set, 9)).toBe(3_600_000);
    // Settings frozen before repositories had a limit give the crawl none.
    expect(crawlWorkflowBudgetMs({ ...settings, timeouts: { llmMs: 1, sandboxMs: 1, ioMs: 1, heartbeatMs: 1 } }, 9)).toBeUndefined();
  });

  it('gets its limit from the firing that opens its run', async () => {
    const store = new LocalStore(fs.mkdtempSync(path.join(os.tmpdir(), 'repost-bench-open-')));
    const settings = pipelineSettingsFrom(loadConfig({ env: {} }));
    const repos = ['a/one', 'a/two', 'b/three'].map((id) => ({ id }));
    const github = () => ({ search: async () => ({ repos }) }) as never;
    const opened = await openBenchmarkRun(
      { store, outDirOf: (runId) => `/out/${runId}`, github },
      { scheduleId: 'bench', firedAt: '2025-05-05T10:00:05Z', everyMs: 86_400_000, sinceCutoff: '2025-01-01', split: 'eval', filters: {} as never, limit: 10, settingsKey: 'sha256-' + '0'.repeat(64), storeId: await store.storeId(), settings },
    );
    expect(opened.repositories).toBe(3);
    expect(opened.crawlTimeoutMs).toBe(crawlWorkflowBudgetMs(settings, 3));
  });
});
