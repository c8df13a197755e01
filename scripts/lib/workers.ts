/**
 * Running workers: which task queues a process polls, with which activities (activities/index.ts)
 * and with what concurrency. LLM activities and container activities are on separate queues so
 * each scales and is rate-limited alone; a deployment may run one process per role
 * (`tsx workers/main.ts --roles llm`), and a command that runs its own workers (the embedded mode)
 * starts them here too.
 */
import * as os from 'node:os';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { createSandboxExecutor, ioQueueActivities, llmQueueWithCollector, openStore, sandboxQueueActivities } from '../../activities';
import type { Store } from '../../activities/store/types';
import type { Config } from '../../temporal.config';
import { checkRunningCrawls } from './store-check';

export const WORKER_ROLES = ['workflows', 'io', 'llm', 'sandbox'] as const;
export type WorkerRole = (typeof WORKER_ROLES)[number];

export interface RunWorkersOptions {
  config: Config;
  connection: NativeConnection;
  /** Sandbox image tag (required when the sandbox role runs). */
  image?: string;
  roles?: readonly WorkerRole[];
  /** A prebuilt workflow bundle (tests build it once); default: bundle `workflows/` at start. */
  workflowBundle?: { code: string };
  /** The store to use; default: the configured one (opened here, closed when the workers stop). */
  store?: Store;
  log?: (line: string) => void;
}

export interface RunningWorkers {
  /** Resolves when every worker has stopped. */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

let runtimeInstalled = false;
/** Keep the SDK's own logging to errors (it warns, for instance, that an activity-only worker has no workflows); the factory prints its own progress. */
export function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // Already installed by the host process.
  }
}

export async function startWorkers(options: RunWorkersOptions): Promise<RunningWorkers> {
  const { config, connection } = options;
  const roles = new Set(options.roles ?? WORKER_ROLES);
  const q = config.temporal.taskQueues;
  const base = { connection, namespace: config.temporal.namespace };
  const workers: Worker[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const needsStore = roles.has('io') || roles.has('llm') || roles.has('sandbox');
  let store: Store | null = options.store ?? null;
  if (!store && needsStore) {
    store = await openStore(config);
    const opened = store;
    cleanups.push(() => opened.close());
  }
  if (store) {
    // A worker that cannot reach its store, or whose store is not the one of the runs it would
    // serve, fails now with a message saying so, not one function at a time.
    try {
      await checkRunningCrawls(new Client({ connection, namespace: config.temporal.namespace }), store, [...roles].map((r) => q[r]));
    } catch (err) {
      for (const c of cleanups) await c().catch(() => undefined);
      throw err;
    }
  }

  if (roles.has('workflows')) {
    const source: Partial<WorkerOptions> = options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: require.resolve('../../workflows') };
    workers.push(
      await Worker.create({
        ...base,
        ...source,
        taskQueue: q.workflows,
        maxConcurrentWorkflowTaskExecutions: config.workers.workflowTaskConcurrency,
      }),
    );
  }
  if (roles.has('io')) {
    workers.push(
      await Worker.create({
        ...base,
        taskQueue: q.io,
        activities: ioQueueActivities(config, store!),
        maxConcurrentActivityTaskExecutions: config.workers.ioConcurrency,
      }),
    );
  }
  if (roles.has('llm')) {
    // Batch mode's answers complete their waiting attempts through the client's asynchronous completion.
    const asyncClient = new Client({ connection, namespace: config.temporal.namespace });
    const { activities, collector } = llmQueueWithCollector(
      config,
      store!,
      { complete: (token, result) => asyncClient.activity.complete(token, result), fail: (token, err) => asyncClient.activity.fail(token, err) },
      options.log,
    );
    await collector.start();
    cleanups.unshift(() => collector.stop());
    workers.push(
      await Worker.create({
        ...base,
        taskQueue: q.llm,
        activities,
        maxConcurrentActivityTaskExecutions: config.workers.llmConcurrency,
        // The whole task queue's LLM rate, enforced by the Temporal server across all workers.
        ...(config.workers.llmActivitiesPerSecond ? { maxTaskQueueActivitiesPerSecond: config.workers.llmActivitiesPerSecond } : {}),
      }),
    );
  }
  if (roles.has('sandbox')) {
    if (!options.image) throw new Error('the sandbox role needs the sandbox image tag');
    const executor = createSandboxExecutor(config, options.image, `${os.hostname()}-${process.pid}`);
    const removed = await executor.cleanupLeftovers();
    if (removed > 0) options.log?.(`removed ${removed} sandbox container(s) left by a crashed worker`);
    executor.startLeftoverSweep((n) => options.log?.(`removed ${n} leftover sandbox container(s)`));
    cleanups.push(() => executor.close());
    workers.push(
      await Worker.create({
        ...base,
        taskQueue: q.sandbox,
        activities: sandboxQueueActivities(config, store!, executor),
        maxConcurrentActivityTaskExecutions: config.workers.sandboxConcurrency,
      }),
    );
  }

  const done = Promise.all(workers.map((w) => w.run())).then(async () => {
    for (const c of cleanups) await c();
  });
  return {
    done,
    async shutdown() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await done;
    },
  };
}
