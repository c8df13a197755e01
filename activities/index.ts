/**
 * The activity factory: builds each task queue's activities from their dependencies
 * (configuration, store, LLM gateway, sandbox executor).
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

export function createIo(config: Config, store: Store) {
  return createIoActivities({ config, store });
}

/** Live-benchmark firings and run reports; served by the io workers beside the I/O activities. */
export function createBenchmark(config: Config, store: Store) {
  return createBenchmarkActivities({ config, store });
}

export function createLlm(config: Config, store: Store, gateway = new LlmGateway(config, store)) {
  return createLlmActivities({ config, store, gateway });
}

/** The executor owns warm containers: close it when the worker stops. */
export function createSandboxExecutor(config: Config, image: string, workerId?: string): SandboxExecutor {
  return new SandboxExecutor({ ...config.sandbox, workerId }, { image, packagesDir: dataPaths(config).packages });
}

export function createSandbox(config: Config, executor: SandboxExecutor, store: Store) {
  return createSandboxActivities({ config, store, executor });
}

/** Evaluation runs' activities, on the same three queues as the pipeline's. */
export function createEvalIo(config: Config, store: Store) {
  return createEvalIoActivities({ config, store });
}

/** Pass the pipeline's gateway, so both share the process's rate limits. */
export function createEvalLlm(config: Config, store: Store, gateway = new LlmGateway(config, store)) {
  return createEvalLlmActivities({ config, store, gateway });
}

export function createEvalSandbox(config: Config, executor: SandboxExecutor, store: Store) {
  return createEvalSandboxActivities({ config, store, executor });
}
