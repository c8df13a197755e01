/** A one-activity workflow to watch how Temporal retries the LLM activity. */
import { proxyActivities } from '@temporalio/workflow';
import type { RetryProbeActivities } from './retry-probe-activities';

const { askOnce } = proxyActivities<RetryProbeActivities>({
  startToCloseTimeout: '30 seconds',
  // A short default interval, so a longer wait can only come from the server's Retry-After.
  retry: { initialInterval: '100 milliseconds', backoffCoefficient: 1, maximumAttempts: 5 },
});

export async function askLlmWorkflow(functionId: string): Promise<string> {
  return askOnce(functionId);
}
