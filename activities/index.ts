/**
 * The activity factory: builds each task queue's activities from their dependencies
 * (configuration, artifact store, LLM gateway, sandbox executor).
 */
import type { Config } from '../temporal.config';
import { dataPaths } from '../temporal.config';
import { ArtifactStore } from './artifacts/store';
import { createBenchmarkActivities } from './benchmark-activities';
import { createIoActivities } from './io-activities';
import { createLlmActivities } from './llm-activities';
import { LlmGateway } from './llm';
import { SandboxExecutor } from './sandbox';
import { createSandboxActivities } from './sandbox-activities';

export type { BenchmarkActivities, IoActivities, LlmActivities, SandboxActivities } from './types';

export function createArtifactStore(config: Config): ArtifactStore {
  return new ArtifactStore(dataPaths(config).artifacts);
}

export function createIo(config: Config, store = createArtifactStore(config)) {
  return createIoActivities({ config, store });
}

/** Live-benchmark firings and run reports; served by the io workers beside the I/O activities. */
export function createBenchmark(config: Config, store = createArtifactStore(config)) {
  return createBenchmarkActivities({ config, store });
}

export function createLlm(config: Config, store = createArtifactStore(config), gateway = new LlmGateway(config, store)) {
  return createLlmActivities({ store, gateway });
}

/** The executor owns warm containers: close it when the worker stops. */
export function createSandboxExecutor(config: Config, image: string, workerId?: string): SandboxExecutor {
  return new SandboxExecutor({ ...config.sandbox, workerId }, { image, packagesDir: dataPaths(config).packages });
}

export function createSandbox(config: Config, executor: SandboxExecutor, store = createArtifactStore(config)) {
  return createSandboxActivities({ store, executor });
}
