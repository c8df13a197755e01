/**
 * Through a real Temporal server: a 429 with Retry-After makes Temporal wait that long before
 * the next attempt (nextRetryDelay), and an authentication failure is not retried at all.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { installQuietRuntime } from '../../../scripts/lib/workers';
import { LlmGateway } from '../../../activities/llm';
import { LocalStore } from '../../../activities/store/local';
import { loadConfig } from '../../../temporal.config';
import { startScriptedLlmServer, type ScriptedResponse } from '../../../scripts/lib/scripted-llm-server';
import { createRetryProbeActivities } from './retry-probe-activities';

/** Scripted answer (fixture). */
const ANSWER = 'Return 1.';

const address = process.env.REPOST_TEST_TEMPORAL_ADDRESS;
if (!address) throw new Error('REPOST_TEST_TEMPORAL_ADDRESS is not set: run under the integration project (npm test)');

async function runProbe(responses: ScriptedResponse[]) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-it-llm-'));
  const llm = await startScriptedLlmServer({ rules: [{ kind: 'docstring', responses }] });
  const config = loadConfig({ env: {}, overrides: { dataDir, llm: { baseUrl: llm.url, apiKey: 'scripted', model: 'scripted-test' } } });
  const gateway = new LlmGateway(config, new LocalStore(dataDir));
  installQuietRuntime();
  const taskQueue = `llm-retry-${randomBytes(4).toString('hex')}`;
  const native = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: native,
    taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities: createRetryProbeActivities(gateway),
  });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  try {
    const result = await worker.runUntil(
      client.workflow
        .execute('askLlmWorkflow', { taskQueue, workflowId: taskQueue, args: ['fn-probe'] })
        .then((value) => ({ ok: true as const, value }))
        .catch((error: unknown) => ({ ok: false as const, error })),
    );
    return { result, requests: [...llm.requests] };
  } finally {
    await connection.close();
    await native.close();
    await llm.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

jest.setTimeout(120_000);

it('waits as long as Retry-After says before retrying a rate-limited call', async () => {
  const { result, requests } = await runProbe([{ fault: '429', retryAfterSec: 3 }, ANSWER]);
  expect(result).toEqual({ ok: true, value: ANSWER });
  expect(requests.map((r) => r.reply)).toEqual(['429', 'text']);
  const gap = requests[1]!.receivedAt - requests[0]!.receivedAt;
  // The retry policy alone would retry after 100 ms.
  expect(gap).toBeGreaterThanOrEqual(2900);
  expect(gap).toBeLessThan(10_000);
});

it('retries a server error on the policy interval', async () => {
  const { result, requests } = await runProbe([{ fault: '500' }, { fault: '500' }, ANSWER]);
  expect(result).toEqual({ ok: true, value: ANSWER });
  expect(requests.map((r) => r.reply)).toEqual(['500', '500', 'text']);
  expect(requests[2]!.receivedAt - requests[0]!.receivedAt).toBeLessThan(2900);
});

it('does not retry an authentication failure', async () => {
  const { result, requests } = await runProbe([{ fault: '401' }, ANSWER]);
  expect(result.ok).toBe(false);
  const error = (result as { error: unknown }).error;
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const activityFailure = (error as WorkflowFailedError).cause;
  expect(activityFailure).toBeInstanceOf(ActivityFailure);
  const cause = (activityFailure as ActivityFailure).cause as ApplicationFailure;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect(cause.type).toBe('LlmPermanentError');
  expect(cause.nonRetryable).toBe(true);
  expect(cause.message).toMatch(/authentication failed/);
  expect(requests).toHaveLength(1);
});
