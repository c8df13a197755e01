/**
 * A batch's answer line means for its request exactly what the same answer means on a live call:
 * the same completion reading, and for each HTTP status the same error class, status and retry
 * decision as the live path's classification of the openai client's error.
 */
import { APIError } from 'openai';
import { ApplicationFailure } from '@temporalio/common';
import { classifyLlmError, LlmPermanentError, LlmTransientError, readCompletion } from '../../../../activities/llm';
import { toActivityFailure } from '../../../../activities/llm/failures';
import { BatchOutputLineSchema, outcomeOfLine, unansweredOutcome, type BatchOutputLine } from '../../../../activities/llm/batch';

/** A completion body as an endpoint sends it (fixture). */
const COMPLETION = {
  id: 'chatcmpl-1',
  model: 'gpt-4o-2024',
  choices: [{ index: 0, message: { role: 'assistant', content: 'fixture answer' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 120, completion_tokens: 30 },
};

const line = (value: unknown): BatchOutputLine => BatchOutputLineSchema.parse(value);
const where = 'model gpt-4o in batch b-1 (openai)';

describe('outcomeOfLine', () => {
  it('reads a status 200 line as the live path reads a completion', () => {
    const out = outcomeOfLine(line({ id: 'x', custom_id: 'a', response: { status_code: 200, request_id: 'r', body: COMPLETION }, error: null }), where);
    expect(out).toEqual({ customId: 'a', ok: true, completion: readCompletion(COMPLETION, where) });
    expect(out.ok && out.completion).toEqual({ text: 'fixture answer', finishReason: 'stop', model: 'gpt-4o-2024', id: 'chatcmpl-1', usage: { promptTokens: 120, completionTokens: 30, cachedPromptTokens: 0 } });
  });

  it('keeps a truncated answer an answer (the parsers decide), and a body without choices a transient fault', () => {
    const truncated = outcomeOfLine(line({ custom_id: 'a', response: { status_code: 200, body: { ...COMPLETION, choices: [{ message: { content: 'def f(' }, finish_reason: 'length' }] } } }), where);
    expect(truncated).toMatchObject({ ok: true, completion: { finishReason: 'length', text: 'def f(' } });
    const empty = outcomeOfLine(line({ custom_id: 'a', response: { status_code: 200, body: { choices: [] } } }), where);
    expect(empty.ok).toBe(false);
    const live = (() => {
      try {
        readCompletion({ choices: [] }, where);
      } catch (err) {
        return err;
      }
    })();
    expect(!empty.ok && empty.error).toEqual(live);
    expect(!empty.ok && empty.error).toBeInstanceOf(LlmTransientError);
  });

  it.each([400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503])('classifies HTTP %i exactly as a live call', (status) => {
    const body = { error: { message: `scripted ${status}`, type: 'x', code: null } };
    const out = outcomeOfLine(line({ custom_id: 'a', response: { status_code: status, request_id: 'r', body }, error: null }), where);
    const live = classifyLlmError(APIError.generate(status, body, undefined, new Headers()), { model: 'gpt-4o', baseURL: 'http://endpoint/v1' });
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.error.constructor).toBe(live.constructor);
    expect(out.error.status).toBe(status);
    expect(out.error.message).toContain(`scripted ${status}`);
    const [a, b] = [toActivityFailure(out.error), toActivityFailure(live)] as ApplicationFailure[];
    expect([a!.type, a!.nonRetryable]).toEqual([b!.type, b!.nonRetryable]);
  });

  it('reads the error of a vllm line whose response has no body', () => {
    const str = outcomeOfLine(line({ custom_id: 'a', response: { status_code: 400, request_id: 'r' }, error: 'bad sampling parameters' }), where);
    expect(!str.ok && str.error).toBeInstanceOf(LlmPermanentError);
    expect(!str.ok && str.error.message).toMatch(/bad sampling parameters/);
    const obj = outcomeOfLine(line({ custom_id: 'a', response: { status_code: 503, request_id: 'r', body: null }, error: { error: { message: 'engine overloaded', code: 503 } } }), where);
    expect(!obj.ok && obj.error).toBeInstanceOf(LlmTransientError);
    expect(!obj.ok && obj.error.message).toMatch(/engine overloaded/);
  });

  it.each(['batch_expired', 'batch_cancelled', 'request_timeout', 'something_new'])('makes a request that never ran (%s) transient: asked again in another batch', (code) => {
    const out = outcomeOfLine(line({ custom_id: 'a', response: null, error: { code, message: 'from the service' } }), where);
    expect(!out.ok && out.error).toBeInstanceOf(LlmTransientError);
    expect(!out.ok && out.error.message).toMatch(/from the service/);
    expect((toActivityFailure(!out.ok && out.error) as ApplicationFailure).nonRetryable).toBe(false);
  });

  it('bounds what it quotes from a line', () => {
    const out = outcomeOfLine(line({ custom_id: 'a', response: { status_code: 400, body: { error: { message: 'x'.repeat(100_000) } } } }), where);
    expect(!out.ok && out.error.message.length).toBeLessThan(1200);
  });

  it('gives a request without a line a transient "no answer" naming why', () => {
    const out = unansweredOutcome('a', where, 'the batch ended (expired) without an answer for it');
    expect(out).toMatchObject({ customId: 'a', ok: false });
    expect(!out.ok && out.error).toBeInstanceOf(LlmTransientError);
    expect(!out.ok && out.error.message).toMatch(/no answer for this request \(model gpt-4o in batch b-1 \(openai\)\): the batch ended \(expired\)/);
  });
});
