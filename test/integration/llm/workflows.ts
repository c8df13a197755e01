/**
 * One LLM step through the PRODUCTION proxy (workflows/activities.ts: the LLM queue's timeouts and
 * retry policy), so a test can watch how Temporal retries the production LLM activity.
 */
import type { FunctionRef, PipelineSettings, PreparedFunction, RunRef, TaskQueues, VerdictResult } from '../../../activities/contracts';
import { activityProxies } from '../../../workflows/activities';
import { PIPELINE_PRIORITY } from '../../../workflows/priorities';

export async function checkTestsWorkflow(queues: TaskQueues, settings: PipelineSettings, input: { run: RunRef; fn: FunctionRef; prepared: PreparedFunction; scriptKey: string }): Promise<VerdictResult> {
  return activityProxies(queues, settings).llm(PIPELINE_PRIORITY.checks).checkTests(input);
}
