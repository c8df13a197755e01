/**
 * Activity proxies, one per task queue: repository I/O, LLM calls and container runs are
 * scheduled on separate queues so each scales and is rate-limited on its own.
 * Retries are for transient faults only; an expected outcome comes back as a value.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { BenchmarkActivities, IoActivities, LlmActivities, SandboxActivities } from '../activities/types';
import type { TaskQueues } from '../activities/contracts';

export function activityProxies(queues: TaskQueues) {
  const io = proxyActivities<IoActivities>({
    taskQueue: queues.io,
    startToCloseTimeout: '10 minutes',
    retry: { initialInterval: '1s', maximumAttempts: 5 },
  });
  const llm = proxyActivities<LlmActivities>({
    taskQueue: queues.llm,
    startToCloseTimeout: '5 minutes',
    // Rate-limit answers and 5xx are retried here with backoff; a 429's Retry-After comes back
    // as the failure's next retry delay. Bad requests and auth failures are non-retryable.
    retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 8 },
  });
  const sandbox = proxyActivities<SandboxActivities>({
    taskQueue: queues.sandbox,
    startToCloseTimeout: '20 minutes',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '2s', backoffCoefficient: 2, maximumAttempts: 4 },
  });
  // A firing's GitHub search and a run's report are I/O too, on the same queue and terms.
  const bench = proxyActivities<BenchmarkActivities>({
    taskQueue: queues.io,
    startToCloseTimeout: '10 minutes',
    retry: { initialInterval: '1s', maximumAttempts: 5 },
  });
  return { io, llm, sandbox, bench };
}
