/**
 * Start checks of a worker's store: the store answers, and no running crawl or evaluation run
 * this worker would serve belongs to another store. A run's top workflow carries its run's store
 * id in its memo (set by the launcher, kept across continue-as-new), so a worker can list the
 * running runs of the namespace and refuse to start, naming the run and both stores, instead of failing each of the
 * run's activities (the per-activity `StoreMismatch` failure stays as the backstop).
 */
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import type { RunRef, TaskQueues } from '../../activities/contracts';
import { StoreUnreachableError, type Store } from '../../activities/store/types';

/** The memo key of a run's top workflow. */
export const RUN_MEMO_KEY = 'repost';

export const RunMemoSchema = z.object({
  runId: z.string(),
  storeId: z.string(),
  /** The task queues the run's workflows and activities go to. */
  queues: z.object({ workflows: z.string(), io: z.string(), llm: z.string(), sandbox: z.string() }),
});
export type RunMemo = z.infer<typeof RunMemoSchema>;

/** The memo `startCrawl` gives a crawl's workflow (and `startEval` an evaluation's). */
export function runMemo(run: RunRef, queues: TaskQueues): Record<string, RunMemo> {
  return { [RUN_MEMO_KEY]: { runId: run.runId, storeId: run.storeId, queues: { ...queues } } };
}

export class StoreMismatchError extends Error {
  override name = 'StoreMismatchError';
}

/** The store's id; a store that does not answer fails with a message naming it. */
export async function reachStore(store: Store): Promise<string> {
  try {
    return await store.storeId();
  } catch (err) {
    if (err instanceof StoreUnreachableError) throw err;
    throw new StoreUnreachableError(`cannot reach the store at ${store.location}: ${(err as Error).message}`);
  }
}

/**
 * Throws `StoreMismatchError` when a running crawl or evaluation run that uses one of
 * `polledQueues` was started against another store than `store`. Runs on other task queues
 * (another deployment sharing the namespace) are not this worker's business.
 */
export async function checkRunningCrawls(client: Client, store: Store, polledQueues: readonly string[]): Promise<void> {
  const mine = await reachStore(store);
  const polled = new Set(polledQueues);
  for await (const wf of client.workflow.list({ query: `(WorkflowType = "crawlWorkflow" OR WorkflowType = "evalWorkflow") AND ExecutionStatus = "Running"` })) {
    const memo = RunMemoSchema.safeParse(wf.memo?.[RUN_MEMO_KEY]);
    if (!memo.success) continue;
    const { runId, storeId, queues } = memo.data;
    if (!Object.values(queues).some((q) => polled.has(q))) continue;
    if (storeId !== mine) {
      throw new StoreMismatchError(
        `run ${runId} (workflow ${wf.workflowId}) is running against store ${storeId}, but this worker's store is ${mine} (${store.location}): ` +
          `start the worker with that run's store (REPOST_STORE_URL), or on other task queues (REPOST_TEMPORAL_TASK_QUEUES_*)`,
      );
    }
  }
}
