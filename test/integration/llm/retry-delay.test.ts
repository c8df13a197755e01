/**
 * Through a real Temporal server, the production LLM activity (`checkTests`) scheduled by the
 * production proxy, against scripted faults over HTTP: a 429 with Retry-After makes Temporal wait
 * that long before the next attempt (the failure carries it as its next retry delay), a server
 * error waits the production policy's first interval, and an authentication failure is not retried.
 * The waits are read from the server's own schedule of the next attempt (the pending activity's
 * retry interval), never measured with a clock.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { FunctionRef } from '../../../activities/contracts';
import { llmQueueActivities } from '../../../activities';
import { freezeRunSettings, pipelineSettingsFrom, queuesFrom } from '../../../activities/run-settings';
import { LocalStore } from '../../../activities/store/local';
import { startScriptedLlmServer, type ScriptedResponse } from '../../../scripts/scripted-llm/server';
import { installQuietRuntime } from '../../../scripts/lib/workers';
import { loadConfig } from '../../../temporal.config';
import { requireEnv } from '../../support/factory';
import { waitFor } from '../../support/processes';

/** Scripted answer (fixture). */
const ANSWER = 'REASONING: the tests compare both implementations.\nANSWER: yes';

/** The retry interval the server scheduled after the first failed attempt, in seconds. */
async function firstRetryIntervalSec(handle: WorkflowHandle): Promise<number> {
  return waitFor('the first retry to be scheduled', async () => {
    const pending = (await handle.describe()).raw.pendingActivities?.[0];
    if (!pending || (pending.attempt ?? 0) < 2 || !pending.lastFailure) return undefined;
    const d = pending.currentRetryInterval;
    return Number(d?.seconds ?? 0) + (d?.nanos ?? 0) / 1e9;
  }, 60_000, 50);
}

async function runCheckTests(responses: ScriptedResponse[], watchRetry: boolean) {
  const address = requireEnv('REPOST_TEST_TEMPORAL_ADDRESS');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-it-llm-'));
  const llm = await startScriptedLlmServer({ rules: [{ kind: 'check_tests', responses }] });
  const tag = randomBytes(4).toString('hex');
  const config = loadConfig({
    env: {},
    overrides: { dataDir, llm: { baseUrl: llm.url, apiKey: 'scripted', model: 'scripted-test' }, temporal: { taskQueues: { workflows: `retry-wf-${tag}`, io: `retry-io-${tag}`, llm: `retry-llm-${tag}`, sandbox: `retry-sb-${tag}` } } },
  });
  const store = new LocalStore(dataDir);
  const run = { runId: `retry-${tag}`, settingsKey: await freezeRunSettings(store, config), storeId: await store.storeId() };
  const fn: FunctionRef = { functionId: 'fn-f', repoId: 'demo/repo', commit: 'c'.repeat(40), path: 'm.py', qualname: 'f', name: 'f', split: 'train', license: null };
  const source = await store.put('def f():\n    return 1\n');
  const prepared = { sourceKey: source, contextKey: source, crossFile: false, standalone: true, dependencyCount: 0, localModules: [] };
  const scriptKey = await store.put('def f():\n    return 1\n\ndef test_f():\n    assert f() == f_new_implementation()\n');

  installQuietRuntime();
  const queues = queuesFrom(config);
  const native = await NativeConnection.connect({ address });
  const workflows = await Worker.create({ connection: native, taskQueue: queues.workflows, workflowsPath: require.resolve('./workflows') });
  const activities = await Worker.create({ connection: native, taskQueue: queues.llm, activities: llmQueueActivities(config, store) });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  try {
    const handle = await client.workflow.start('checkTestsWorkflow', { taskQueue: queues.workflows, workflowId: `retry-${tag}`, args: [queues, pipelineSettingsFrom(config), { run, fn, prepared, scriptKey }] });
    const outcome = handle
      .result()
      .then((value: unknown) => ({ ok: true as const, value }))
      .catch((error: unknown) => ({ ok: false as const, error }));
    const both = Promise.all([workflows.runUntil(outcome), activities.runUntil(outcome)]);
    const retryIntervalSec = watchRetry ? await firstRetryIntervalSec(handle) : null;
    await both;
    return { result: await outcome, requests: [...llm.requests], retryIntervalSec };
  } finally {
    await connection.close();
    await native.close();
    await llm.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

jest.setTimeout(120_000);

it('waits as long as Retry-After says before retrying a rate-limited call', async () => {
  const { result, requests, retryIntervalSec } = await runCheckTests([{ fault: '429', retryAfterSec: 3 }, ANSWER], true);
  expect(result).toMatchObject({ ok: true, value: { ok: true, answer: 'yes' } });
  expect(requests.map((r) => r.reply)).toEqual(['429', 'text']);
  // The production policy alone would wait its first interval (2 s): the server scheduled Retry-After's 3 s.
  expect(retryIntervalSec).toBeCloseTo(3, 2);
});

it('retries a server error on the production policy interval', async () => {
  const { result, requests, retryIntervalSec } = await runCheckTests([{ fault: '500' }, ANSWER], true);
  expect(result).toMatchObject({ ok: true, value: { ok: true, answer: 'yes' } });
  expect(requests.map((r) => r.reply)).toEqual(['500', 'text']);
  expect(retryIntervalSec).toBeCloseTo(2, 2);
});

it('does not retry an authentication failure', async () => {
  const { result, requests } = await runCheckTests([{ fault: '401' }, ANSWER], false);
  expect(result.ok).toBe(false);
  const error = (result as { error: unknown }).error;
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const activityFailure = (error as WorkflowFailedError).cause;
  expect(activityFailure).toBeInstanceOf(ActivityFailure);
  expect((activityFailure as ActivityFailure).activityType).toBe('checkTests');
  const cause = (activityFailure as ActivityFailure).cause as ApplicationFailure;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect(cause.type).toBe('LlmPermanentError');
  expect(cause.nonRetryable).toBe(true);
  expect(cause.message).toMatch(/authentication failed/);
  expect(requests).toHaveLength(1);
});
