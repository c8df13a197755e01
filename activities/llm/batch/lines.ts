/**
 * The Batch API's file formats, one JSON object a line:
 *
 *   request   {"custom_id": "...", "method": "POST", "url": "/v1/chat/completions", "body": {...}}
 *   output    {"id": "...", "custom_id": "...", "response": {"status_code": 200, "request_id": "...", "body": {...}}, "error": null}
 *
 * A request line's body is the body a live call sends (`chatCompletionBody`). Output and error
 * files share one line format: an answer is a response with status 200 and a completion body; a
 * request the service refused has a response with another status (its body an error object); a
 * request that never ran has no response and an error (`batch_expired`, `batch_cancelled`,
 * `request_timeout`). `vllm run-batch` writes every line into one file, and its `error` may be a
 * string or an error object of its own; both are read.
 *
 * Reading is by lines from a stream, each line checked against its schema: a line that is not
 * JSON or not of the format is an error naming the file and the line.
 */
import * as readline from 'node:readline';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { chatCompletionBody, type ChatCall } from '../completion';
import { CustomIdSchema, type CustomId } from './ids';
import { BATCH_ENDPOINT } from './limits';

/** One request line, as written to a batch's request file. */
export interface BatchRequestLine {
  custom_id: CustomId;
  method: 'POST';
  url: typeof BATCH_ENDPOINT;
  body: ReturnType<typeof chatCompletionBody>;
}

/** The request line of a call: the same body the live path sends, under the request's `custom_id`. */
export function batchRequestLine(customId: string, call: ChatCall): BatchRequestLine {
  return { custom_id: CustomIdSchema.parse(customId), method: 'POST', url: BATCH_ENDPOINT, body: chatCompletionBody(call) };
}

/** A line of a request file as read back (a file written by the factory, or one handed to it). */
export const BatchRequestLineSchema = z.object({
  custom_id: CustomIdSchema,
  method: z.literal('POST'),
  url: z.literal(BATCH_ENDPOINT),
  body: z
    .object({
      model: z.string().min(1),
      messages: z.array(z.object({ role: z.string(), content: z.unknown() }).passthrough()).min(1),
    })
    .passthrough(),
});

/** The `error` of an output line: the Batch API's `{code, message}`, or what vLLM writes (a string, or `{error: {...}}`). */
const LineErrorSchema = z.union([
  z.string(),
  z
    .object({
      code: z.union([z.string(), z.number()]).nullish(),
      message: z.string().nullish(),
      error: z.object({ message: z.string().nullish(), code: z.union([z.string(), z.number()]).nullish() }).passthrough().nullish(),
    })
    .passthrough(),
]);

/** One line of an output or error file. */
export const BatchOutputLineSchema = z
  .object({
    id: z.string().max(256).nullish(),
    custom_id: CustomIdSchema,
    response: z
      .object({
        status_code: z.number().int().min(100).max(599),
        request_id: z.string().max(256).nullish(),
        body: z.unknown().optional(),
      })
      .passthrough()
      .nullish(),
    error: LineErrorSchema.nullish(),
  })
  .passthrough()
  .refine((line) => line.response != null || line.error != null, { message: 'a line needs a response or an error' });
export type BatchOutputLine = z.infer<typeof BatchOutputLineSchema>;

/** A file of a batch that is not in the Batch API's format: names the file and the line. */
export class BatchFileError extends Error {
  override name = 'BatchFileError';
  constructor(
    message: string,
    readonly file: string,
    readonly line: number | null,
  ) {
    super(message);
  }
}

/** The text of a JSONL file's lines, one a line (each ends with a newline, as the format wants). */
export function jsonlText(values: Iterable<unknown>): string {
  let out = '';
  for (const v of values) out += `${JSON.stringify(v)}\n`;
  return out;
}

/** Bytes a value takes as one JSONL line, its newline included. */
export function lineBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value)) + 1;
}

const issueText = (e: z.ZodError) =>
  e.issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`)
    .join('; ');

/**
 * The lines of a JSONL stream, each parsed and checked against `schema`, with its 1-based line
 * number; blank lines are skipped. `name` (the file) is what an error names. The stream is
 * read to its end or closed when the reader stops early.
 */
export async function* readJsonl<S extends z.ZodType>(input: Readable, schema: S, name: string): AsyncGenerator<{ line: number; value: z.infer<S> }> {
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const text of lines) {
      n++;
      if (text.trim() === '') continue;
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (err) {
        throw new BatchFileError(`${name} line ${n} is not JSON: ${(err as Error).message}`, name, n);
      }
      const parsed = schema.safeParse(raw);
      if (!parsed.success) throw new BatchFileError(`${name} line ${n} is not a batch line: ${issueText(parsed.error)}`, name, n);
      yield { line: n, value: parsed.data };
    }
  } finally {
    lines.close();
    input.destroy();
  }
}
