/** A run's frozen settings as a worker applies them: its own process settings kept, the run's laid over. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { RunConfigs } from '../../../activities/run-context';
import { freezeRunSettings, frozenPipelineSettings, pipelineSettingsFrom, runSettingsFrom } from '../../../activities/run-settings';
import { sandboxActivityBudgetMs } from '../../../activities/sandbox/budget';
import { functionWorkflowBudgetMs } from '../../../activities/workflow-budgets';
import { LocalStore } from '../../../activities/store/local';
import { loadConfig } from '../../../temporal.config';

describe('RunConfigs', () => {
  it("applies the run's settings over the worker's own, and refuses another store or another prompt version", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-run-settings-'));
    const store = new LocalStore(dataDir);
    const launcher = loadConfig({ env: {}, overrides: { dataDir, llm: { model: 'run-model', baseUrl: 'http://launcher:1/v1' }, loops: { debugRounds: 5 } } });
    const settings = runSettingsFrom(launcher);
    const run = { runId: 'r', settingsKey: await store.putJson(settings), storeId: await store.storeId() };
    const worker = loadConfig({ env: {}, overrides: { dataDir, llm: { model: 'worker-model', baseUrl: 'http://worker:2/v1' } } });
    const runs = new RunConfigs(worker, store);

    const applied = await runs.forRun(run);
    expect(applied.llm.model).toBe('run-model');
    expect(applied.loops.debugRounds).toBe(5);
    // Endpoints belong to the worker's process.
    expect(applied.llm.baseUrl).toBe('http://worker:2/v1');

    await expect(runs.checkPromptVersion(run, 'tests', settings.promptVersions.tests!)).resolves.toBeUndefined();
    const mismatch = await runs.checkPromptVersion(run, 'tests', '999').catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(ApplicationFailure);
    expect(mismatch).toMatchObject({ type: 'PromptVersionMismatch', nonRetryable: false });

    const elsewhere = await runs.forRun({ ...run, storeId: 'local:another' }).catch((e: unknown) => e);
    expect(elsewhere).toMatchObject({ type: 'StoreMismatch', nonRetryable: false });
  });
});

describe('the pipeline settings a run freezes', () => {
  it('take every time budget from the configuration', () => {
    const config = loadConfig({ env: {}, overrides: { llm: { timeoutSec: 40, rateLimitWaitSec: 20 }, temporal: { ioTimeoutSec: 600, heartbeatTimeoutSec: 15 }, sandbox: { timeoutSec: 30 } } });
    const pipeline = pipelineSettingsFrom(config);
    expect(pipeline.timeouts).toMatchObject({ llmMs: 60_000, ioMs: 600_000, heartbeatMs: 15_000, sandboxMs: sandboxActivityBudgetMs(config.sandbox) });
    // The children's limits are derived from those budgets unless the configuration sets them.
    expect(pipeline.timeouts.functionWorkflowMs).toBe(functionWorkflowBudgetMs(pipeline.timeouts, config.loops));
    expect(pipelineSettingsFrom(loadConfig({ env: {}, overrides: { temporal: { childTimeoutSec: { function: 99 } } } })).timeouts.functionWorkflowMs).toBe(99_000);
    expect(pipelineSettingsFrom(loadConfig({ env: {}, overrides: { sandbox: { timeoutSec: 31 } } })).timeouts.sandboxMs).toBeGreaterThan(pipeline.timeouts.sandboxMs);
  });

  it('travel with the run, and a run frozen without them gets them from its own settings', async () => {
    const store = new LocalStore(fs.mkdtempSync(path.join(os.tmpdir(), 'repost-frozen-')));
    const launcher = loadConfig({ env: {}, overrides: { loops: { debugRounds: 6 } } });
    const worker = loadConfig({ env: {} });
    const key = await freezeRunSettings(store, launcher);
    expect(frozenPipelineSettings(await store.getJson(key), worker).debugRounds).toBe(6);
    const older = await store.putJson(runSettingsFrom(launcher));
    expect(frozenPipelineSettings(await store.getJson(older), worker).debugRounds).toBe(6);
  });
});
