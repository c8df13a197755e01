import { Readable } from 'node:stream';
import { chatCompletionBody } from '../../../../activities/llm/completion';
import {
  BATCH_ENDPOINT,
  BatchFileError,
  BatchOutputLineSchema,
  BatchRequestLineSchema,
  batchIdProblem,
  batchRequestLine,
  jsonlText,
  lineBytes,
  newBatchId,
  readJsonl,
  RemoteIdSchema,
} from '../../../../activities/llm/batch';

const call = { model: 'gpt-4o', messages: [{ role: 'system' as const, content: 'sys' }, { role: 'user' as const, content: 'Function: f\nplease' }], temperature: 0, maxTokens: 512 };

async function readAll(text: string, schema = BatchOutputLineSchema) {
  const out: { line: number; value: unknown }[] = [];
  for await (const l of readJsonl(Readable.from([text]), schema, 'results.jsonl')) out.push(l);
  return out;
}

describe('batch request lines', () => {
  it('carry the body the live call sends, under the request custom_id', () => {
    const line = batchRequestLine('req-1', call);
    expect(line).toEqual({ custom_id: 'req-1', method: 'POST', url: BATCH_ENDPOINT, body: chatCompletionBody(call) });
    expect(line.body).toEqual({ model: 'gpt-4o', messages: call.messages, temperature: 0, max_tokens: 512 });
    expect(BatchRequestLineSchema.parse(JSON.parse(JSON.stringify(line)))).toEqual(line);
  });

  it('refuse a custom_id that is unbounded or not of safe characters', () => {
    expect(() => batchRequestLine('', call)).toThrow(/custom_id/);
    expect(() => batchRequestLine('../x', call)).toThrow(/custom_id/);
    expect(() => batchRequestLine('a b', call)).toThrow(/custom_id/);
    expect(() => batchRequestLine('x'.repeat(129), call)).toThrow(/custom_id/);
    expect(batchRequestLine(`a${'x'.repeat(127)}`, call).custom_id).toHaveLength(128);
  });

  it('are written one JSON object a line, and their bytes counted with the newline', () => {
    const lines = [batchRequestLine('a', call), batchRequestLine('b', call)];
    const text = jsonlText(lines);
    expect(text.split('\n')).toHaveLength(3);
    expect(text.endsWith('\n')).toBe(true);
    expect(lines.map(lineBytes).reduce((a, b) => a + b)).toBe(Buffer.byteLength(text));
    expect(lineBytes({ s: 'é' })).toBe(Buffer.byteLength('{"s":"é"}') + 1);
  });
});

describe('reading output and error lines', () => {
  const ok = { id: 'batch_req_1', custom_id: 'a', response: { status_code: 200, request_id: 'req_1', body: { choices: [] } }, error: null };

  it('reads the Batch API format and what vllm run-batch writes, skipping blank lines', async () => {
    const vllmString = { id: 'vllm-1', custom_id: 'b', response: { status_code: 400, request_id: 'vllm-batch-1', body: null }, error: 'Request must not be sent in stream mode' };
    const vllmObject = { id: 'vllm-2', custom_id: 'c', response: { status_code: 404, request_id: 'vllm-batch-2' }, error: { error: { message: 'model not found', code: 404 } } };
    const expired = { id: 'batch_req_2', custom_id: 'd', response: null, error: { code: 'batch_expired', message: 'expired' } };
    const got = await readAll([ok, vllmString, '', vllmObject, expired].map((v) => (v === '' ? '' : JSON.stringify(v))).join('\n'));
    expect(got.map((g) => [g.line, (g.value as { custom_id: string }).custom_id])).toEqual([
      [1, 'a'],
      [2, 'b'],
      [4, 'c'],
      [5, 'd'],
    ]);
  });

  it('names the file and the line of a line that is not JSON', async () => {
    const text = `${JSON.stringify(ok)}\n{"custom_id": "b", "response":\n`;
    const err = await readAll(text).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BatchFileError);
    expect(err).toMatchObject({ file: 'results.jsonl', line: 2, message: expect.stringMatching(/^results\.jsonl line 2 is not JSON/) });
  });

  it('names the line of a line that is JSON but not a batch line', async () => {
    const cases: [unknown, RegExp][] = [
      [{ custom_id: 'a' }, /a line needs a response or an error/],
      [{ ...ok, custom_id: '../../etc/passwd' }, /custom_id/],
      [{ ...ok, response: { status_code: 99 } }, /response\.status_code/],
      [[1, 2], /expected object/i],
    ];
    for (const [value, message] of cases) {
      const err = await readAll(`${JSON.stringify(ok)}\n${JSON.stringify(value)}\n`).catch((e: unknown) => e);
      expect(err).toMatchObject({ line: 2, message: expect.stringMatching(message) });
      expect((err as Error).message).toMatch(/^results\.jsonl line 2 is not a batch line/);
    }
  });
});

describe('batch ids', () => {
  it('are made from the time, readable and sortable', () => {
    expect(newBatchId(new Date('2026-11-23T14:39:47.123Z'), () => '0a1b2c3d')).toBe('b-20261123-143947-0a1b2c3d');
    const a = newBatchId(new Date('2026-11-23T14:39:47Z'), () => 'ffffffff');
    const b = newBatchId(new Date('2026-11-23T14:39:48Z'), () => '00000000');
    expect(a < b).toBe(true);
  });

  it('from the service are checked before they go into a URL or a manifest', () => {
    expect(RemoteIdSchema.safeParse('batch_abc-123').success).toBe(true);
    for (const bad of ['', '../files', 'a/b', 'a?b', 'x'.repeat(129), 'é']) expect(RemoteIdSchema.safeParse(bad).success).toBe(false);
  });

  it('are checked wherever they enter', () => {
    for (const bad of ['', '..', '../x', 'a/b', 'B-UPPER', '-lead', 'x'.repeat(65), 'a\u0000b']) expect(batchIdProblem(bad)).toMatch(/not a batch id/);
    expect(batchIdProblem('b-20261123-143947-0a1b2c3d')).toBeNull();
  });
});
