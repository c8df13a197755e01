/** The `temporal` section of the configuration. The Temporal frontend, its namespace, the embedded dev server, timeouts and task queues. */
import { z } from 'zod';
import { PER_PROCESS, positiveInt } from '../shapes';

export const TemporalSection = z
  .object({
    /** host:port of an existing Temporal frontend; unset = start the embedded dev server. */
    address: z.string().min(1).optional(),
    /** The Temporal namespace the factory's workflows run in. */
    namespace: z.string().min(1).default('default'),
    /** Port of the embedded dev server's frontend and of its web UI. */
    port: z.number().int().min(1).max(65535).default(7233),
    /** Port of the embedded dev server's web UI. */
    uiPort: z.number().int().min(1).max(65535).default(8233),
    /**
     * A long activity (an LLM call, a container run) whose worker has not heartbeated for this
     * long is retried elsewhere: how soon work lost with a worker resumes.
     */
    heartbeatTimeoutSec: positiveInt.default(30),
    /** The longest one io activity may take (a snapshot, an analysis, a run's summary and files); it heartbeats meanwhile. */
    ioTimeoutSec: positiveInt.default(1800),
    /**
     * Longest a child workflow may run (a repository, a function, an evaluation's function, a
     * live benchmark firing's crawl) before Temporal ends it and its parent records it as
     * failed; unset = derived from the activity budgets (`activities/workflow-budgets.ts`).
     */
    childTimeoutSec: z
      .object({ repo: positiveInt.optional(), function: positiveInt.optional(), evalFunction: positiveInt.optional(), crawl: positiveInt.optional() })
      .prefault({}),
    /** The `temporal` CLI to use; unset = PATH, then the project-local tools folder. */
    cliPath: z.string().min(1).optional(),
    /** Task queue names, one per kind of work (workers of a role poll its queue); the same everywhere a crawl's workers run. */
    taskQueues: z
      .object({
        workflows: z.string().min(1).default('repost-workflows'),
        llm: z.string().min(1).default('repost-llm'),
        sandbox: z.string().min(1).default('repost-sandbox'),
        io: z.string().min(1).default('repost-io'),
      })
      .prefault({}),
  })
  .prefault({})
  .meta(PER_PROCESS);
