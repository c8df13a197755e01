/**
 * Later stages go first: the pipeline schedules its steps with task queue priorities (final
 * checks 1 ... a new function's first call 5), and the real Temporal server hands a backlog out
 * in priority order, so a function one check away from acceptance is not starved by new ones.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { installQuietRuntime } from '../../scripts/lib/workers';
import { STEP_PRIORITY } from '../../workflows/activities';
import { requireEnv } from '../support/factory';
import { waitFor } from '../support/processes';

describe('task queue priority', () => {
  it('a backlog of LLM calls is served later stages first', async () => {
    const address = requireEnv('REPOST_TEST_TEMPORAL_ADDRESS');
    installQuietRuntime();
    const tag = randomBytes(4).toString('hex');
    const native = await NativeConnection.connect({ address });
    const connection = await Connection.connect({ address });
    const client = new Client({ connection });
    const wfWorker = await Worker.create({ connection: native, taskQueue: `prio-wf-${tag}`, workflowsPath: require.resolve('./priority/workflows') });
    const running = wfWorker.run();
    try {
      // New functions' first calls and, among them, two final checks, all waiting for one slot.
      const P = STEP_PRIORITY;
      const priorities = [P.sandbox, P.sandbox, P.tests, P.sandbox, P.checks, P.sandbox, P.coverage, P.checks];
      const handle = await client.workflow.start('priorityProbeWorkflow', { taskQueue: `prio-wf-${tag}`, workflowId: `prio-${tag}`, args: [`prio-act-${tag}`, priorities] });
      await waitFor('the backlog', async () => {
        const history = await handle.fetchHistory();
        return (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).length === priorities.length;
      });
      const served: string[] = [];
      const actWorker = await Worker.create({
        connection: native,
        taskQueue: `prio-act-${tag}`,
        maxConcurrentActivityTaskExecutions: 1,
        activities: { probe: async (label: string) => (served.push(label), label) },
      });
      await actWorker.runUntil(handle.result());
      const order = served.map((l) => Number(l.split(':p')[1]));
      expect(order).toEqual([...order].sort((a, b) => a - b));
      expect(order.slice(0, 2)).toEqual([P.checks, P.checks]);
    } finally {
      wfWorker.shutdown();
      await running;
      await native.close();
      await connection.close();
    }
  });
});
