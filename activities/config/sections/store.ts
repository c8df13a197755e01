/** The `store` section of the configuration. Where the store is: the local data directory or a PostgreSQL database. */
import { z } from 'zod';
import { PER_PROCESS, positiveInt } from '../shapes';

export const StoreSection = z
  .object({
    /**
     * Where runs, artifacts, snapshots, LLM exchanges and records live: unset = the local data
     * directory; `postgres://user:pass@host:port/db` = a PostgreSQL database shared by workers
     * on several machines.
     */
    url: z.string().regex(/^postgres(ql)?:\/\//, 'expected a postgres:// URL').optional(),
    /** Database connections per process (PostgreSQL): enough for the activities a worker runs at once. */
    poolSize: positiveInt.default(10),
  })
  .prefault({})
  .meta(PER_PROCESS);
