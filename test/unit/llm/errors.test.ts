/** LLM failures as the activities hand them to Temporal: retryable with the server's delay, or not retryable; and Retry-After read. */
import { ApplicationFailure } from '@temporalio/common';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { classifyLlmError, LlmPermanentError, LlmTransientError, parseRetryAfter } from '../../../activities/llm';
import { toActivityFailure } from '../../../activities/llm/failures';

describe('toActivityFailure', () => {
  it('maps a transient error to a retryable ApplicationFailure with the server-given delay', () => {
    const f = toActivityFailure(new LlmTransientError('rate limited', 4000, 429));
    expect(f).toBeInstanceOf(ApplicationFailure);
    const af = f as ApplicationFailure;
    expect(af.nonRetryable).toBe(false);
    expect(af.nextRetryDelay).toBe(4000);
    expect(af.type).toBe('LlmTransientError');
  });

  it('leaves the delay to the retry policy when the server gave none', () => {
    const af = toActivityFailure(new LlmTransientError('timeout', undefined, undefined)) as ApplicationFailure;
    expect(af.nonRetryable).toBe(false);
    expect(af.nextRetryDelay).toBeUndefined();
  });

  it('maps a permanent error to a non-retryable ApplicationFailure', () => {
    const af = toActivityFailure(new LlmPermanentError('bad key', 401)) as ApplicationFailure;
    expect(af).toBeInstanceOf(ApplicationFailure);
    expect(af.nonRetryable).toBe(true);
    expect(af.type).toBe('LlmPermanentError');
    expect(af.message).toBe('bad key');
  });

  it('passes other errors through unchanged', () => {
    const e = new Error('something else');
    expect(toActivityFailure(e)).toBe(e);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter('0.5')).toBe(500);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

describe('classifyLlmError messages', () => {
  const where = { model: 'gpt-4o', baseURL: 'http://127.0.0.1:9/v1' };

  it('name the configuration keys to check by their current names', () => {
    const notFound = classifyLlmError(APIError.generate(404, { message: 'no such route' }, 'no such route', new Headers()), where);
    expect(notFound).toBeInstanceOf(LlmPermanentError);
    expect(notFound.message).toContain('check OPENAI_BASE_URL / llm.baseUrl');
    expect(notFound.message).not.toContain('baseURL');
    const timedOut = classifyLlmError(new APIConnectionTimeoutError(), { ...where, timeoutMs: 120_000 });
    expect(timedOut.message).toBe('LLM request timed out after 120 s (llm.timeoutSec) (model gpt-4o at http://127.0.0.1:9/v1)');
    // An abort the client does not recognise as its timeout is told apart by the time it took.
    const aborted = classifyLlmError(new APIConnectionError({ message: 'aborted' }), { ...where, elapsedMs: 5_000, timeoutMs: 5_000 });
    expect(aborted.message).toBe('LLM request timed out after 5 s (llm.timeoutSec) (model gpt-4o at http://127.0.0.1:9/v1)');
  });
});
