/**
 * How LLM errors surface to Temporal: a transient fault becomes a retryable ApplicationFailure
 * whose next retry waits as long as the server asked (Retry-After), a permanent one becomes
 * non-retryable so the workflow sees it at once instead of burning its retry budget.
 */
import { ApplicationFailure } from '@temporalio/common';
import { LlmPermanentError, LlmTransientError } from './errors';

export function toActivityFailure(err: unknown): Error {
  if (err instanceof LlmTransientError) {
    return ApplicationFailure.create({
      message: err.message,
      type: 'LlmTransientError',
      nonRetryable: false,
      ...(err.retryAfterMs !== undefined ? { nextRetryDelay: err.retryAfterMs } : {}),
      details: [{ status: err.status ?? null, retryAfterMs: err.retryAfterMs ?? null }],
      cause: err,
    });
  }
  if (err instanceof LlmPermanentError) {
    return ApplicationFailure.create({
      message: err.message,
      type: 'LlmPermanentError',
      nonRetryable: true,
      details: [{ status: err.status ?? null }],
      cause: err,
    });
  }
  return err instanceof Error ? err : new Error(String(err));
}
