/**
 * Task queue priorities (Temporal's priority key: 1 is served first, 5 last). On a shared queue a
 * step further along its function goes first, so functions one step from their end are not starved
 * by new functions' first calls. The embedded server uses one partition per task queue, so the
 * order is exact; on a cluster with several partitions it holds within each.
 */

export type Priority = 1 | 2 | 3 | 4 | 5;

/** The pipeline's steps (workflows/function.ts). */
export const PIPELINE_PRIORITY = {
  /** The solvability stage of an evaluation record: after the final checks, the function's last. */
  solvability: 1,
  /** Final checks and the record: the function is nearly done. */
  checks: 1,
  coverage: 2,
  debug: 3,
  /** Test generation and the first execution. */
  tests: 4,
  /** A new function's first call. */
  sandbox: 5,
} as const satisfies Record<string, Priority>;

/** An evaluation's steps per function (workflows/eval-function.ts). */
export const EVAL_PRIORITY = {
  /** Training targets: the function's last step. */
  training: 1,
  /** Candidate tests and the pass/fail matrix the ranking scores. */
  ranking: 2,
  /** A self-repair round: the answer, then its run. */
  repair: 3,
  /** A sample's first answer and its run. */
  sample: 4,
  /** The prompt (and a generated docstring): the function's first step. */
  prompt: 5,
} as const satisfies Record<string, Priority>;

/** A test augmentation's steps per function (workflows/augment-function.ts). */
export const AUGMENT_PRIORITY = {
  /** The augmented script's check against the ground truth: the last step. */
  check: 1,
  /** The ground truth's values on the proposed inputs. */
  groundTruth: 3,
  /** The model's proposed inputs: the first step. */
  inputs: 4,
} as const satisfies Record<string, Priority>;
