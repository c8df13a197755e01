/**
 * What a batch's answer line means for the request that asked it: the same success or failure a
 * live call gives. A completion body is read by `readCompletion` (the live path's reader), an
 * HTTP status by `classifyHttpStatus` (the live path's rule: 429, 408 and 5xx transient, other
 * statuses permanent), and a request the batch never ran (expired, cancelled, timed out, or no
 * line at all) is transient: asking again, in another batch, can succeed.
 */
import { readCompletion, type CompletionRead } from '../completion';
import { classifyHttpStatus, LlmTransientError, type LlmError } from '../errors';
import type { CustomId } from './ids';
import type { BatchOutputLine } from './lines';

export type BatchRequestOutcome = { customId: CustomId; ok: true; completion: CompletionRead } | { customId: CustomId; ok: false; error: LlmError };

/** Non-HTTP error codes of the Batch API: the request did not run. */
const NOT_RUN: Record<string, string> = {
  batch_expired: 'the batch expired before this request ran',
  batch_cancelled: 'the batch was cancelled before this request ran',
  request_timeout: 'the request timed out in the batch',
};

const MAX_DETAIL = 1000;
const clip = (s: string) => (s.length > MAX_DETAIL ? `${s.slice(0, MAX_DETAIL)}…` : s);

/** The readable part of a line's error object, or of an error body. */
function errorText(value: unknown): { code: string | null; message: string | null } {
  if (value == null) return { code: null, message: null };
  if (typeof value === 'string') return { code: null, message: value };
  if (typeof value !== 'object') return { code: null, message: String(value) };
  const o = value as { code?: unknown; message?: unknown; error?: unknown };
  if (o.error != null && typeof o.error === 'object') return errorText(o.error);
  return {
    code: typeof o.code === 'string' || typeof o.code === 'number' ? String(o.code) : null,
    message: typeof o.message === 'string' ? o.message : null,
  };
}

/** `where` names the model and batch in messages, as the live path names the model and endpoint. */
export function outcomeOfLine(line: BatchOutputLine, where: string): BatchRequestOutcome {
  const customId = line.custom_id;
  const response = line.response ?? null;
  if (response && response.status_code === 200) {
    try {
      return { customId, ok: true, completion: readCompletion(response.body, where) };
    } catch (err) {
      return { customId, ok: false, error: err as LlmError };
    }
  }
  if (response) {
    const fromBody = errorText(response.body);
    const fromLine = errorText(line.error);
    const detail = fromBody.message ?? fromLine.message ?? `HTTP ${response.status_code}`;
    return { customId, ok: false, error: classifyHttpStatus(response.status_code, clip(detail), where) };
  }
  const { code, message } = errorText(line.error);
  const what = (code !== null ? NOT_RUN[code] : undefined) ?? `the batch could not run this request${code !== null ? ` (${clip(code)})` : ''}`;
  return { customId, ok: false, error: new LlmTransientError(`LLM batch: ${what} (${where})${message ? `: ${clip(message)}` : ''}`, undefined, undefined) };
}

/** A request that ended with its batch and has no line in the batch's result files. */
export function unansweredOutcome(customId: CustomId, where: string, reason: string): BatchRequestOutcome {
  return { customId, ok: false, error: new LlmTransientError(`LLM batch: no answer for this request (${where}): ${clip(reason)}`, undefined, undefined) };
}
