/**
 * The two ways an LLM call can fail. Transient faults (rate limits, server errors, timeouts,
 * dropped connections) are worth retrying, after `retryAfterMs` when the server said how long
 * to wait; permanent ones (bad request, bad key, unknown model) fail the same way every time.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';

export class LlmTransientError extends Error {
  override name = 'LlmTransientError';
  constructor(
    message: string,
    /** How long the server asked us to wait, when it said so (Retry-After). */
    readonly retryAfterMs: number | undefined,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class LlmPermanentError extends Error {
  override name = 'LlmPermanentError';
  constructor(
    message: string,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export type LlmError = LlmTransientError | LlmPermanentError;

/** Parses a Retry-After value: delay in seconds, or an HTTP date. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value == null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

function retryAfterOf(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  // Some OpenAI-compatible servers send the finer-grained millisecond header.
  const ms = headers.get('retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  return parseRetryAfter(headers.get('retry-after'));
}

const PERMANENT_HINTS: Record<number, string> = {
  400: 'the endpoint rejected the request as malformed (check the model name, max tokens and message format)',
  401: 'authentication failed (check OPENAI_API_KEY / llm.apiKey)',
  403: 'the API key is not allowed to use this model or endpoint',
  404: 'not found (check OPENAI_BASE_URL / llm.baseUrl, which must end in /v1 for most servers, and the model name)',
  409: 'the endpoint reported a conflict',
  413: 'the request is too large for the endpoint (prompt too long)',
  422: 'the endpoint could not process the request parameters',
};

/**
 * The one rule for an HTTP status the endpoint answered instead of a completion, live or in a
 * batch's output: 429, 408 and 5xx are transient (after `retryAfterMs` when the server said),
 * any other status is permanent. `where` names the model and endpoint (or batch).
 */
export function classifyHttpStatus(status: number, detail: string, where: string, options: { retryAfterMs?: number; cause?: unknown } = {}): LlmError {
  const cause = options.cause !== undefined ? { cause: options.cause } : undefined;
  if (status === 429 || status === 408 || status >= 500) {
    const what = status === 429 ? 'rate limited' : status === 408 ? 'request timeout' : `server error ${status}`;
    return new LlmTransientError(`LLM ${what} (${where}): ${detail}`, options.retryAfterMs, status, cause);
  }
  const hint = PERMANENT_HINTS[status] ?? `HTTP ${status}`;
  return new LlmPermanentError(`LLM request failed, ${hint} (${where}): ${detail}`, status, cause);
}

/** Maps anything the openai client (or our own response validation) throws to a typed LLM error. */
export function classifyLlmError(err: unknown, context: { model: string; baseURL: string; elapsedMs?: number; timeoutMs?: number }): LlmError {
  if (err instanceof LlmTransientError || err instanceof LlmPermanentError) return err;
  const where = `model ${context.model} at ${context.baseURL}`;
  if (err instanceof APIUserAbortError) {
    // The caller gave up (a cancelled activity); retrying is the caller's decision.
    return new LlmTransientError(`LLM request aborted by the caller (${where})`, undefined, undefined, { cause: err });
  }
  // The limit is named by its configuration key, so the message says what to raise.
  const limit = context.timeoutMs !== undefined ? ` after ${Number((context.timeoutMs / 1000).toFixed(3))} s (llm.timeoutSec)` : ' (llm.timeoutSec)';
  if (err instanceof APIConnectionTimeoutError) {
    return new LlmTransientError(`LLM request timed out${limit} (${where})`, undefined, undefined, { cause: err });
  }
  if (err instanceof APIConnectionError) {
    // The client's own abort is not always recognisable as a timeout (the abort reason can come
    // from another realm, e.g. under a test runner), so the elapsed time decides too.
    if (context.elapsedMs !== undefined && context.timeoutMs !== undefined && context.elapsedMs >= context.timeoutMs * 0.95) {
      return new LlmTransientError(`LLM request timed out${limit} (${where})`, undefined, undefined, { cause: err });
    }
    const cause = (err as { cause?: unknown }).cause;
    const detail = cause instanceof Error ? `: ${cause.message}` : '';
    return new LlmTransientError(`cannot reach the LLM endpoint (${where})${detail}`, undefined, undefined, { cause: err });
  }
  if (err instanceof APIError && err.status !== undefined) {
    return classifyHttpStatus(err.status, err.message, where, { retryAfterMs: retryAfterOf(err.headers), cause: err });
  }
  if (err instanceof SyntaxError) {
    // A half-written or garbled body: usually a proxy or server hiccup, so worth another try.
    return new LlmTransientError(`LLM endpoint returned malformed JSON (${where}): ${err.message}`, undefined, undefined, { cause: err });
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code && ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'UND_ERR_SOCKET'].includes(code)) {
    return new LlmTransientError(`network error ${code} talking to the LLM (${where})`, undefined, undefined, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new LlmTransientError(`unexpected LLM client failure (${where}): ${message}`, undefined, undefined, { cause: err });
}
