/**
 * Failures as the workflows record them: one line naming what failed and why, short enough for a
 * history and a record. An expected outcome is a value (docs/architecture.md, invariant 2); these are for
 * activities that failed for good and children that failed, which become outcomes with their
 * reason so the run goes on (docs/architecture.md, invariant 8).
 */
import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';

/** The one-line description of a failure that ends a child workflow. */
export function failureText(err: unknown): string {
  if (err instanceof WorkflowExecutionAlreadyStartedError) return `duplicate workflow id: ${err.workflowId} is already running`;
  const e = err as { message?: string; cause?: { message?: string; type?: string } };
  const cause = e.cause?.message ? ` (${e.cause.type ? `${e.cause.type}: ` : ''}${e.cause.message})` : '';
  return `${e.message ?? String(err)}${cause}`.slice(0, 1500);
}

/** An activity that failed for good, as a reason; cancellation (and anything that is not an activity's failure) is thrown on. */
export function activityFailureReason(err: unknown): string {
  if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
  const cause = err.cause instanceof ApplicationFailure ? `${err.cause.type ?? 'error'}: ${err.cause.message}` : (err.cause?.message ?? err.message);
  return `activity ${err.activityType} failed: ${cause}`.slice(0, 1500);
}
