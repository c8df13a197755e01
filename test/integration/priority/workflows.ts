/** A probe for task queue priority: one activity per given priority, all scheduled at once. */
import { proxyActivities } from '@temporalio/workflow';

export interface PriorityProbeActivities {
  probe(label: string): Promise<string>;
}

export async function priorityProbeWorkflow(activityQueue: string, priorities: number[]): Promise<string[]> {
  return Promise.all(
    priorities.map((priorityKey, i) =>
      proxyActivities<PriorityProbeActivities>({ taskQueue: activityQueue, startToCloseTimeout: '1 minute', priority: { priorityKey } }).probe(`${i}:p${priorityKey}`),
    ),
  );
}
