/**
 * Activity proxies, one per task queue: repository I/O, LLM calls and container runs are
 * scheduled on separate queues so each scales and is rate-limited on its own.
 * Retries are for transient faults only; an expected outcome comes back as a value.
 */
import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { IoActivities, LlmActivities, SandboxActivities } from '../activities/types';
import type { EvalIoActivities, EvalLlmActivities, EvalSandboxActivities } from '../activities/eval-activities';
import type { TaskQueues } from '../activities/contracts';

const IO_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1s', maximumAttempts: 5 },
};

const LLM_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  // Rate-limit answers and 5xx are retried here with backoff; a 429's Retry-After comes back
  // as the failure's next retry delay. Bad requests and auth failures are non-retryable.
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 8 },
};

const SANDBOX_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '20 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumAttempts: 4 },
};

export function activityProxies(queues: TaskQueues) {
  const io = proxyActivities<IoActivities>({ ...IO_OPTIONS, taskQueue: queues.io });
  const llm = proxyActivities<LlmActivities>({ ...LLM_OPTIONS, taskQueue: queues.llm });
  const sandbox = proxyActivities<SandboxActivities>({ ...SANDBOX_OPTIONS, taskQueue: queues.sandbox });
  return { io, llm, sandbox };
}

/** The evaluation's activities, on the same three queues with the same timeouts and retries. */
export function evalActivityProxies(queues: TaskQueues) {
  const io = proxyActivities<EvalIoActivities>({ ...IO_OPTIONS, taskQueue: queues.io });
  const llm = proxyActivities<EvalLlmActivities>({ ...LLM_OPTIONS, taskQueue: queues.llm });
  const sandbox = proxyActivities<EvalSandboxActivities>({ ...SANDBOX_OPTIONS, taskQueue: queues.sandbox });
  return { io, llm, sandbox };
}
