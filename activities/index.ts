/**
 * What each task queue serves: the one place that puts a queue's activities together (the
 * pipeline's, the live benchmark's and the evaluation's), each built from its dependencies
 * (configuration, store, LLM gateway, sandbox executor). A worker process takes one set per queue
 * it polls (scripts/lib/workers.ts).
 */
import type { Config } from '../temporal.config';
import { dataPaths } from '../temporal.config';
import { createBenchmarkActivities } from './benchmark-activities';
import { createEvalIoActivities } from './eval-io-activities';
import { createEvalLlmActivities } from './eval-llm-activities';
import { createEvalSandboxActivities } from './eval-sandbox-activities';
import { createClassEvalIoActivities, createClassEvalLlmActivities, createClassEvalSandboxActivities } from './eval-class-activities';
import { createIoActivities } from './io-activities';
import OpenAI from 'openai';
import { createLlmActivities, deliverBatchAnswer } from './llm-activities';
import { LlmGateway } from './llm';
import { BatchCollector, type AsyncCompletion } from './llm/batch/collector';
import { BatchFolders, FileExchangeBackend, OpenAiBatchBackend, type BatchBackend } from './llm/batch';
import { SandboxExecutor } from './sandbox';
import { createSandboxActivities } from './sandbox-activities';
import type { Store } from './store/types';

export type { BenchmarkActivities, IoActivities, LlmActivities, SandboxActivities } from './types';
export { openStore } from './store';

/** One queue's activities: the parts side by side; two parts naming the same activity is a mistake caught at start. */
function oneQueue<A extends object, B extends object, C extends object = object, D extends object = object>(queue: string, a: A, b: B, c?: C, d?: D): A & B & C & D {
  const merged: Record<string, unknown> = {};
  for (const part of [a, b, c ?? {}, d ?? {}]) {
    for (const [name, fn] of Object.entries(part)) {
      if (name in merged) throw new Error(`two activities named ${name} on the ${queue} queue`);
      merged[name] = fn;
    }
  }
  return merged as A & B & C & D;
}

/** Task queue `io`: sources, analysis, records and run files; live-benchmark firings; the evaluation's bookkeeping. */
export function ioQueueActivities(config: Config, store: Store) {
  return oneQueue('io', createIoActivities({ config, store }), createBenchmarkActivities({ config, store }), createEvalIoActivities({ config, store }), createClassEvalIoActivities({ config, store }));
}

/** Task queue `llm`: every LLM call. One gateway per process, so the pipeline's and the evaluation's calls share its rate limits. */
export function llmQueueActivities(config: Config, store: Store, gateway = new LlmGateway(config, store)) {
  return oneQueue('llm', createLlmActivities({ config, store, gateway }), createEvalLlmActivities({ config, store, gateway }), createClassEvalLlmActivities({ config, store, gateway }));
}

/** The backend batch mode hands its batches to (`llm.batch.backend`). */
export function batchBackendOf(config: Config): BatchBackend {
  const folders = new BatchFolders(config.dataDir);
  if (config.llm.batch.backend === 'files') return new FileExchangeBackend(folders);
  // Retrying is the collector's: a failed hand-over or poll is tried again at the next poll.
  const client = new OpenAI({ baseURL: config.llm.baseUrl, apiKey: config.llm.apiKey, timeout: config.llm.timeoutSec * 1000, maxRetries: 0 });
  return new OpenAiBatchBackend({ client, folders });
}

/**
 * Task queue `llm` with batch mode's collector: a step in batch mode hands its request to the
 * collector, which completes the waiting attempt through `completion` when the batch answers.
 * Start the collector with the worker (it picks up what a previous process left) and stop it after.
 */
export function llmQueueWithCollector(config: Config, store: Store, completion: AsyncCompletion, log?: (line: string) => void, gateway = new LlmGateway(config, store)) {
  let collector: BatchCollector | undefined;
  const pipeline = createLlmActivities({ config, store, gateway, handOver: (request) => collector!.enqueue(request) });
  const b = config.llm.batch;
  collector = new BatchCollector({
    dataDir: config.dataDir,
    backend: batchBackendOf(config),
    policy: { maxRequests: b.maxRequests, maxBytes: b.maxBytes, maxWaitSec: b.maxWaitSec },
    pollMs: b.pollSec * 1000,
    completion,
    deliver: (pending, answer) => deliverBatchAnswer(pipeline, pending, answer),
    ...(log ? { log } : {}),
  });
  return { activities: oneQueue('llm', pipeline, createEvalLlmActivities({ config, store, gateway }), createClassEvalLlmActivities({ config, store, gateway })), collector };
}

/** Task queue `sandbox`: every container run. */
export function sandboxQueueActivities(config: Config, store: Store, executor: SandboxExecutor) {
  return oneQueue('sandbox', createSandboxActivities({ config, store, executor }), createEvalSandboxActivities({ config, store, executor }), createClassEvalSandboxActivities({ config, store, executor }));
}

/** The executor owns warm containers: close it when the worker stops. */
export function createSandboxExecutor(config: Config, image: string, workerId?: string): SandboxExecutor {
  return new SandboxExecutor({ ...config.sandbox, workerId }, { image, packagesDir: dataPaths(config).packages });
}
