/**
 * What each task queue serves: the one place that puts a queue's activities together (the
 * pipeline's, the live benchmark's and the evaluation's), each built from its dependencies
 * (configuration, store, LLM gateway, sandbox executor). A worker process takes one set per queue
 * it polls (scripts/lib/workers.ts).
 */
import type { Config } from '../temporal.config';
import { dataPaths } from '../temporal.config';
import { createBenchmarkActivities } from './benchmark-activities';
import { createEvalIoActivities, createEvalLlmActivities, createEvalSandboxActivities } from './eval-activities';
import { createIoActivities } from './io-activities';
import { createLlmActivities } from './llm-activities';
import { LlmGateway } from './llm';
import { SandboxExecutor } from './sandbox';
import { createSandboxActivities } from './sandbox-activities';
import type { Store } from './store/types';

export type { BenchmarkActivities, IoActivities, LlmActivities, SandboxActivities } from './types';
export { openStore } from './store';

/** One queue's activities: the parts side by side; two parts naming the same activity is a mistake caught at start. */
function oneQueue<A extends object, B extends object, C extends object = object>(queue: string, a: A, b: B, c?: C): A & B & C {
  const merged: Record<string, unknown> = {};
  for (const part of [a, b, c ?? {}]) {
    for (const [name, fn] of Object.entries(part)) {
      if (name in merged) throw new Error(`two activities named ${name} on the ${queue} queue`);
      merged[name] = fn;
    }
  }
  return merged as A & B & C;
}

/** Task queue `io`: sources, analysis, records and run files; live-benchmark firings; the evaluation's bookkeeping. */
export function ioQueueActivities(config: Config, store: Store) {
  return oneQueue('io', createIoActivities({ config, store }), createBenchmarkActivities({ config, store }), createEvalIoActivities({ config, store }));
}

/** Task queue `llm`: every LLM call. One gateway per process, so the pipeline's and the evaluation's calls share its rate limits. */
export function llmQueueActivities(config: Config, store: Store, gateway = new LlmGateway(config, store)) {
  return oneQueue('llm', createLlmActivities({ config, store, gateway }), createEvalLlmActivities({ config, store, gateway }));
}

/** Task queue `sandbox`: every container run. */
export function sandboxQueueActivities(config: Config, store: Store, executor: SandboxExecutor) {
  return oneQueue('sandbox', createSandboxActivities({ config, store, executor }), createEvalSandboxActivities({ config, store, executor }));
}

/** The executor owns warm containers: close it when the worker stops. */
export function createSandboxExecutor(config: Config, image: string, workerId?: string): SandboxExecutor {
  return new SandboxExecutor({ ...config.sandbox, workerId }, { image, packagesDir: dataPaths(config).packages });
}
