/**
 * Activity proxies, one per task queue: repository I/O, LLM calls and container runs are
 * scheduled on separate queues so each scales and is rate-limited on its own.
 *
 * Timeouts come from the run's settings (docs/architecture.md, invariant 9): an LLM call may take as long as
 * `llm.timeoutSec` (and a wait for a rate-limit slot) allows, a sandbox activity as long as its installs and runs may. Every long
 * activity heartbeats, so one lost with its worker is retried elsewhere after the heartbeat
 * timeout, not after its whole budget. Retries are for transient faults only and are sized to ride
 * out a Docker daemon or Temporal server restart of a minute or two; an expected outcome comes
 * back as a value.
 *
 * Later stages go first: the LLM and sandbox proxies come one per priority (workflows/priorities.ts),
 * so a function one check away from acceptance does not wait behind new functions' first calls.
 */
import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { BenchmarkActivities, IoActivities, LlmActivities, SandboxActivities } from '../activities/types';
import type { PipelineSettings, TaskQueues } from '../activities/contracts';
import type { EvalIoActivities } from '../activities/eval-io-activities';
import type { EvalLlmActivities } from '../activities/eval-llm-activities';
import type { EvalSandboxActivities } from '../activities/eval-sandbox-activities';
import type { ClassEvalIoActivities, ClassEvalLlmActivities, ClassEvalSandboxActivities } from '../activities/eval-class-activities';
import type { Priority } from './priorities';

/** Transient faults: retried with backoff for about three minutes (a daemon or server restart). */
const TRANSIENT_RETRY = { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10 } as const;

/** The options of each queue's activities, from the run's settings. */
function queueOptions(queues: TaskQueues, settings: PipelineSettings) {
  const { timeouts } = settings;
  // A heartbeat older than this means the worker is gone: the activity is retried elsewhere.
  const heartbeatTimeout = timeouts.heartbeatMs;
  const io: ActivityOptions = {
    taskQueue: queues.io,
    startToCloseTimeout: timeouts.ioMs,
    heartbeatTimeout: Math.max(heartbeatTimeout, 60_000),
    retry: TRANSIENT_RETRY,
  };
  const llm: ActivityOptions = {
    taskQueue: queues.llm,
    startToCloseTimeout: timeouts.llmMs,
    heartbeatTimeout,
    // Rate-limit answers and 5xx are retried here with backoff; a 429's Retry-After comes back
    // as the failure's next retry delay. Bad requests and auth failures are non-retryable.
    retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 8 },
  };
  // A step in batch mode waits for its batch (hours): start-to-close covers the flush wait and the
  // batch's window, and there is no heartbeat timeout (the waiting attempt is held by the Temporal
  // server and completed by the collector, which keeps the request durably).
  const llmBatch: ActivityOptions = { ...llm, startToCloseTimeout: timeouts.llmBatchMs ?? timeouts.llmMs, heartbeatTimeout: undefined };
  const sandbox: ActivityOptions = {
    taskQueue: queues.sandbox,
    startToCloseTimeout: timeouts.sandboxMs,
    heartbeatTimeout,
    retry: TRANSIENT_RETRY,
  };
  return { io, llm, llmBatch, sandbox };
}

/** Proxies of one activity interface per priority, made once each. */
function byPriority<A extends object>(options: ActivityOptions): (priority: Priority) => A {
  const proxies = new Map<number, A>();
  return (priority: Priority): A => {
    let p = proxies.get(priority);
    if (!p) {
      p = proxyActivities<A>({ ...options, priority: { priorityKey: priority } }) as A;
      proxies.set(priority, p);
    }
    return p;
  };
}

/** The LLM proxies: an activity whose step is in batch mode (settings.llmBatchActivities) gets the batch options, the others the live ones. */
function llmByMode(options: { llm: ActivityOptions; llmBatch: ActivityOptions }, settings: PipelineSettings): (priority: Priority) => LlmActivities {
  const live = byPriority<LlmActivities>(options.llm);
  const batched = new Set(settings.llmBatchActivities ?? []);
  if (batched.size === 0) return live;
  const batch = byPriority<LlmActivities>(options.llmBatch);
  return (priority: Priority): LlmActivities =>
    new Proxy({} as LlmActivities, {
      get: (_, name) => (typeof name === 'string' && batched.has(name) ? batch(priority) : live(priority))[name as keyof LlmActivities],
    });
}

export function activityProxies(queues: TaskQueues, settings: PipelineSettings) {
  const options = queueOptions(queues, settings);
  const io = proxyActivities<IoActivities>(options.io);
  const llm = llmByMode(options, settings);
  const sandbox = byPriority<SandboxActivities>(options.sandbox);
  // A firing's GitHub search and a run's report are I/O too, on the same queue and terms.
  const bench = proxyActivities<BenchmarkActivities>({ ...options.io, heartbeatTimeout: '1 minute' });
  return { io, llm, sandbox, bench };
}

/** The evaluation's activities, on the same three queues with the same timeouts, retries and priority scale. */
export function evalActivityProxies(queues: TaskQueues, settings: PipelineSettings) {
  const options = queueOptions(queues, settings);
  return {
    io: proxyActivities<EvalIoActivities>(options.io),
    llm: byPriority<EvalLlmActivities>(options.llm),
    sandbox: byPriority<EvalSandboxActivities>(options.sandbox),
  };
}

/** Class evaluation's activities, on the same queues and terms as the function evaluation's. */
export function classEvalActivityProxies(queues: TaskQueues, settings: PipelineSettings) {
  const options = queueOptions(queues, settings);
  return {
    io: proxyActivities<ClassEvalIoActivities & Pick<EvalIoActivities, 'loadEvalItems'>>(options.io),
    llm: byPriority<ClassEvalLlmActivities>(options.llm),
    sandbox: byPriority<ClassEvalSandboxActivities>(options.sandbox),
  };
}
