/**
 * The scripted server's Batch API, driven by the real `openai` client over real HTTP: uploads,
 * batches on the server's own clock, answers from the same script as the chat endpoint, chosen
 * lines failing, cancelling, expiring, a refused input, and counters that show every line was
 * answered exactly once.
 */
import OpenAI, { toFile } from 'openai';
import { batchRequestLine, jsonlText } from '../../../activities/llm/batch';
import { renderPrompt } from '../../../activities/llm';
import { startScriptedLlmServer, type LlmScript, type ScriptedLlmServer } from '../../../scripts/scripted-llm/server';
import type { BatchLineFault, ScriptedBatchOptions } from '../../../scripts/scripted-llm/batch-api';

/** Scripted responses (fixtures): two sandbox attempts per function, a fault for one function. */
const SCRIPT: LlmScript = {
  rules: [
    { kind: 'sandbox', functionName: 'limited', responses: [{ fault: '429', retryAfterSec: 1 }] },
    { kind: 'sandbox', functionName: 'dropped', responses: [{ fault: 'reset' }] },
    { kind: 'sandbox', responses: ['fixture sandbox answer 1 for {{functionName}}', 'fixture sandbox answer 2 for {{functionName}}'] },
  ],
};

const call = (functionName: string) => ({
  model: 'scripted-batch',
  messages: renderPrompt('sandbox', { functionName, filePath: 'a.py', context: `def ${functionName}():\n    pass\n` }).messages,
  temperature: 0,
  maxTokens: 256,
});

const requestFile = (names: string[], prefix = 'r') => jsonlText(names.map((n, i) => batchRequestLine(`${prefix}-${i}-${n}`, call(n))));

describe('scripted Batch API', () => {
  let server: ScriptedLlmServer;
  const clock = { now: 1_000_000 };
  const faults = new Map<string, BatchLineFault>();
  afterEach(async () => {
    faults.clear();
    await server?.close();
  });

  const start = async (batches: ScriptedBatchOptions = {}) => {
    server = await startScriptedLlmServer(SCRIPT, {
      apiKey: 'batch-key',
      batches: { clock: () => clock.now, completeAfterMs: 60_000, lineFault: ({ customId }) => faults.get(customId), ...batches },
    });
    return new OpenAI({ baseURL: server.url, apiKey: 'batch-key', maxRetries: 0, timeout: 10_000 });
  };

  const contentOf = async (client: OpenAI, id: string | null | undefined) => (id ? (await (await client.files.content(id)).text()).trim().split('\n').map((l) => JSON.parse(l)) : []);

  it('answers a batch from the script after its delay, once per line, and writes output and error files', async () => {
    const client = await start();
    faults.set('r-3-e', { status: 500 });
    faults.set('r-4-f', { error: 'request_timeout' });
    const names = ['a', 'b', 'a', 'e', 'f', 'limited', 'dropped'];
    const file = await client.files.create({ file: await toFile(Buffer.from(requestFile(names)), 'requests.jsonl'), purpose: 'batch' });
    expect(file).toMatchObject({ purpose: 'batch', bytes: Buffer.byteLength(requestFile(names)) });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { repost_batch: 'b-one' } });
    expect(created.status).toBe('validating');

    // Before its delay has passed on the batch clock, nothing is answered.
    clock.now += 59_000;
    const waiting = await client.batches.retrieve(created.id);
    expect(waiting.status).toBe('in_progress');
    expect(waiting.request_counts).toEqual({ total: 7, completed: 0, failed: 0 });
    expect(server.requests).toHaveLength(0);

    clock.now += 1_000;
    const done = await client.batches.retrieve(created.id);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 7, completed: 3, failed: 4 });
    const output = await contentOf(client, done.output_file_id);
    const errors = await contentOf(client, done.error_file_id);

    // Answers walk through the script per function, as the chat endpoint does.
    expect(output.map((l) => [l.custom_id, l.response.status_code, l.response.body.choices[0].message.content])).toEqual([
      ['r-0-a', 200, 'fixture sandbox answer 1 for a'],
      ['r-1-b', 200, 'fixture sandbox answer 1 for b'],
      ['r-2-a', 200, 'fixture sandbox answer 2 for a'],
    ]);
    expect(output[0].response.body.usage.prompt_tokens).toBeGreaterThan(0);
    const byId = Object.fromEntries(errors.map((l) => [l.custom_id, l]));
    expect(byId['r-3-e'].response.status_code).toBe(500);
    expect(byId['r-4-f']).toMatchObject({ response: null, error: { code: 'request_timeout' } });
    expect(byId['r-5-limited'].response).toMatchObject({ status_code: 429, body: { error: { code: 'rate_limit_exceeded' } } });
    expect(byId['r-6-dropped']).toMatchObject({ response: null, error: { code: 'request_timeout' } });

    // Looking again answers nothing again.
    await client.batches.retrieve(created.id);
    const stats = server.batchStats();
    expect(stats).toMatchObject({ filesUploaded: 1, batchesCreated: 1, linesProduced: 7 });
    expect(Object.values(stats.linesByCustomId)).toEqual([1, 1, 1, 1, 1, 1, 1]);
    // Lines with a fault are not put to the script; the others are recorded like chat requests.
    expect(server.requests.map((r) => [r.batch?.customId, r.functionName, r.reply])).toEqual([
      ['r-0-a', 'a', 'text'],
      ['r-1-b', 'b', 'text'],
      ['r-2-a', 'a', 'text'],
      ['r-5-limited', 'limited', '429'],
      ['r-6-dropped', 'dropped', 'reset'],
    ]);
  });

  it('answers a batch line exactly as the chat endpoint answers the same request', async () => {
    const client = await start({ completeAfterMs: 0 });
    const live = await client.chat.completions.create({ model: 'scripted-batch', messages: call('same').messages, temperature: 0, max_tokens: 256 });
    const file = await client.files.create({ file: await toFile(Buffer.from(requestFile(['same'])), 'requests.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const [line] = await contentOf(client, (await client.batches.retrieve(batch.id)).output_file_id);
    expect(live.choices[0]!.message.content).toBe('fixture sandbox answer 1 for same');
    // The second request of the same function gets the script's next answer, whichever way it came.
    expect(line.response.body.choices[0].message.content).toBe('fixture sandbox answer 2 for same');
    const [viaChat, viaBatch] = server.requests;
    expect({ ...viaBatch, receivedAt: 0, headers: {}, batch: undefined }).toEqual({ ...viaChat, receivedAt: 0, headers: {}, batch: undefined });
  });

  it('lists batches newest first with their metadata, and pages through them', async () => {
    const client = await start({ completeAfterMs: 0 });
    const file = await client.files.create({ file: await toFile(Buffer.from(requestFile(['a'])), 'requests.jsonl'), purpose: 'batch' });
    for (const tag of ['one', 'two', 'three']) await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { repost_batch: tag } });
    const seen: string[] = [];
    for await (const b of client.batches.list({ limit: 2 })) seen.push(b.metadata!.repost_batch!);
    expect(seen).toEqual(['three', 'two', 'one']);
  });

  it('cancels a batch: its lines get batch_cancelled and none is put to the script', async () => {
    const client = await start();
    const file = await client.files.create({ file: await toFile(Buffer.from(requestFile(['a', 'b'])), 'requests.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect((await client.batches.cancel(batch.id)).status).toBe('cancelling');
    const cancelled = await client.batches.retrieve(batch.id);
    expect(cancelled.status).toBe('cancelled');
    expect((await contentOf(client, cancelled.error_file_id)).map((l) => l.error.code)).toEqual(['batch_cancelled', 'batch_cancelled']);
    expect(cancelled.output_file_id).toBeNull();
    expect(server.requests).toHaveLength(0);
    expect(server.batchStats().batchesCancelled).toBe(1);
    await expect(client.batches.cancel(batch.id)).rejects.toThrow(/Cannot cancel a batch with status cancelled/);
  });

  it('expires a batch that would complete past its window', async () => {
    const client = await start({ completeAfterMs: 3 * 3600_000, expireAfterMs: 3600_000 });
    const file = await client.files.create({ file: await toFile(Buffer.from(requestFile(['a'])), 'requests.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect((await client.batches.retrieve(batch.id)).status).toBe('in_progress');
    clock.now += 3600_000;
    const expired = await client.batches.retrieve(batch.id);
    expect(expired.status).toBe('expired');
    expect((await contentOf(client, expired.error_file_id))[0].error.code).toBe('batch_expired');
  });

  it('fails a batch whose input breaks the format, naming the lines', async () => {
    const client = await start({ completeAfterMs: 0, maxRequests: 3 });
    const lines = [
      JSON.stringify(batchRequestLine('ok-1', call('a'))),
      '{"custom_id": "broken"',
      JSON.stringify({ ...batchRequestLine('ok-1', call('b')) }),
      JSON.stringify({ ...batchRequestLine('wrong-url', call('c')), url: '/v1/embeddings' }),
    ];
    const file = await client.files.create({ file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'requests.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const failed = await client.batches.retrieve(batch.id);
    expect(failed.status).toBe('failed');
    expect(failed.errors!.data!.map((e) => [e.code, e.line])).toEqual([
      ['invalid_json_line', 2],
      ['duplicate_custom_id', 3],
      ['mismatched_endpoint', 4],
      ['too_many_requests', null],
    ]);
    expect(server.batchStats().linesProduced).toBe(0);
  });

  it('refuses what the Batch API refuses: another endpoint, a missing file, an upload too large, a wrong key', async () => {
    const limit = Buffer.byteLength(requestFile(['a'])) + 10;
    const client = await start({ maxBytes: limit });
    await expect(client.files.create({ file: await toFile(Buffer.alloc(limit + 1, 'x'), 'big.jsonl'), purpose: 'batch' })).rejects.toMatchObject({ status: 413 });
    const file = await client.files.create({ file: await toFile(Buffer.from(requestFile(['a'])), 'requests.jsonl'), purpose: 'batch' });
    await expect(client.batches.create({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h' })).rejects.toMatchObject({ status: 400 });
    await expect(client.batches.create({ input_file_id: 'file-none', endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toMatchObject({ status: 400 });
    await expect(client.batches.retrieve('batch_none')).rejects.toMatchObject({ status: 404 });
    await expect(client.files.content('file-none')).rejects.toMatchObject({ status: 404 });
    const stranger = new OpenAI({ baseURL: server.url, apiKey: 'wrong', maxRetries: 0 });
    await expect(stranger.batches.retrieve('batch_scripted_1')).rejects.toMatchObject({ status: 401 });
    expect(server.batchStats()).toMatchObject({ filesUploaded: 1, batchesCreated: 0 });
  });
});
