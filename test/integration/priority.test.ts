/**
 * Later stages go first: the production activity proxies schedule each step with its task queue
 * priority (the pipeline's final checks 1 ... a new function's first call 5; the evaluation's
 * steps on the same scale), and the real Temporal server hands a backlog out in priority order, so
 * a function one check away from acceptance is not starved by new ones.
 */
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { pipelineSettingsFrom, queuesFrom } from '../../activities/run-settings';
import { installQuietRuntime } from '../../scripts/lib/workers';
import { loadConfig } from '../../temporal.config';
import { requireEnv } from '../support/factory';
import { waitFor } from '../support/processes';
import { STEPS, type Step } from './priority/workflows';

describe('task queue priority', () => {
  it('a backlog of LLM calls from the production proxies is served later stages first', async () => {
    const address = requireEnv('REPOST_TEST_TEMPORAL_ADDRESS');
    installQuietRuntime();
    const tag = randomBytes(4).toString('hex');
    const config = loadConfig({ env: {}, overrides: { temporal: { taskQueues: { workflows: `prio-wf-${tag}`, io: `prio-io-${tag}`, llm: `prio-llm-${tag}`, sandbox: `prio-sb-${tag}` } } } });
    const queues = queuesFrom(config);
    const native = await NativeConnection.connect({ address });
    const connection = await Connection.connect({ address });
    const client = new Client({ connection });
    const wfWorker = await Worker.create({ connection: native, taskQueue: queues.workflows, workflowsPath: require.resolve('./priority/workflows') });
    const running = wfWorker.run();
    try {
      // New functions' first calls, a few middle steps and, among them, two final checks, all waiting for one slot.
      const backlog: Step[] = ['pipeline sandbox', 'eval prompt', 'pipeline tests', 'pipeline sandbox', 'eval sample', 'pipeline checks', 'eval repair', 'pipeline sandbox', 'pipeline coverage', 'eval ranking', 'pipeline debug', 'pipeline checks'];
      const handle = await client.workflow.start('priorityBacklogWorkflow', { taskQueue: queues.workflows, workflowId: `prio-${tag}`, args: [queues, pipelineSettingsFrom(config), backlog] });
      const scheduled = await waitFor('the backlog', async () => {
        const events = ((await handle.fetchHistory()).events ?? []).filter((e) => e.activityTaskScheduledEventAttributes);
        return events.length === backlog.length ? events : undefined;
      });
      // Each call went out on the LLM queue with its step's priority.
      for (const e of scheduled) {
        const a = e.activityTaskScheduledEventAttributes!;
        expect(a.taskQueue?.name).toBe(queues.llm);
        const { label } = JSON.parse(Buffer.from(a.input!.payloads![0]!.data!).toString()) as { label: string };
        const step = label.slice(label.indexOf(':') + 1) as Step;
        expect([step, a.priority?.priorityKey]).toEqual([step, STEPS[step]]);
      }

      const served: Step[] = [];
      const record = async (input: { label: string }) => {
        served.push(input.label.slice(input.label.indexOf(':') + 1) as Step);
        return null;
      };
      const names = ['generateSandboxScript', 'generateTests', 'debugScript', 'improveCoverage', 'checkTests', 'prepareEvalPrompt', 'sampleCandidate', 'repairCandidate', 'generateCandidateTests'];
      const actWorker = await Worker.create({
        connection: native,
        taskQueue: queues.llm,
        maxConcurrentActivityTaskExecutions: 1,
        activities: Object.fromEntries(names.map((n) => [n, record])),
      });
      await actWorker.runUntil(handle.result());
      const order = served.map((s) => STEPS[s]);
      expect(order).toEqual([...order].sort((a, b) => a - b));
      expect(served.slice(0, 2)).toEqual(['pipeline checks', 'pipeline checks']);
      expect(served).toHaveLength(backlog.length);
    } finally {
      wfWorker.shutdown();
      await running;
      await native.close();
      await connection.close();
    }
  });
});
