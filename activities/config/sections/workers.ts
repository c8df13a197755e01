/** The `workers` section of the configuration. What one worker process runs at once. */
import { z } from 'zod';
import { PER_PROCESS, positiveInt } from '../shapes';

export const WorkersSection = z
  .object({
    /** Concurrent LLM calls per worker process (each mostly waits on the network). */
    llmConcurrency: positiveInt.default(8),
    /** Concurrent container runs per worker process; sized for a 2-core machine. */
    sandboxConcurrency: positiveInt.default(2),
    /** Concurrent repository I/O activities (snapshots, analysis, dataset writes). */
    ioConcurrency: positiveInt.default(2),
    /** Workflow tasks run at once per worker process. */
    workflowTaskConcurrency: positiveInt.default(20),
    /** Task-queue-wide LLM activity rate (activities per second), unset = unlimited. */
    llmActivitiesPerSecond: z.number().positive().optional(),
  })
  .prefault({})
  .meta(PER_PROCESS);
