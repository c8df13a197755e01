/**
 * The two batch backends behind one interface. `openai` against the scripted server over real
 * HTTP with the real client: handing over, polling on the server's clock, collecting the output
 * and error files, and never asking twice across a restart. `files` in a temporary folder: the
 * request file written, results read when another program has written them whole, every line
 * checked, no path leaving the batch's folder, and results imported from elsewhere.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import OpenAI from 'openai';
import { LlmGateway, LlmPermanentError, LlmTransientError, renderPrompt, type ExchangeRecord } from '../../../activities/llm';
import {
  BatchFolders,
  BatchImportError,
  BatchNotFoundError,
  BatchRejectedError,
  FileExchangeBackend,
  OpenAiBatchBackend,
  BATCH_METADATA_KEY,
  batchRequestLine,
  importBatchResults,
  jsonlText,
  makeBatchFolder,
  readBatchOutcomes,
  type BatchManifest,
  type BatchRequestLine,
  type BatchRequestOutcome,
  type PreparedBatch,
} from '../../../activities/llm/batch';
import { LocalStore } from '../../../activities/store/local';
import { loadConfig } from '../../../temporal.config';
import { startScriptedLlmServer, type LlmScript, type ScriptedLlmServer } from '../../../scripts/scripted-llm/server';
import type { ScriptedBatchOptions } from '../../../scripts/scripted-llm/batch-api';

/** Scripted responses (fixtures): one answer per function, a rate limit and a refusal. */
const SCRIPT: LlmScript = {
  rules: [
    { kind: 'sandbox', functionName: 'limited', responses: [{ fault: '429' }] },
    { kind: 'sandbox', functionName: 'refused', responses: [{ fault: '400' }] },
    { kind: 'sandbox', responses: ['fixture sandbox answer for {{functionName}}'] },
  ],
};

const call = (functionName: string) => ({
  model: 'scripted-batch',
  messages: renderPrompt('sandbox', { functionName, filePath: 'm.py', context: `def ${functionName}():\n    pass\n` }).messages,
  temperature: 0,
  maxTokens: 300,
});
const prepared = (id: string, names: string[]): PreparedBatch => ({ id, lines: names.map((n) => batchRequestLine(`req-${n}`, call(n))) });

async function outcomes(folders: BatchFolders, manifest: BatchManifest): Promise<Record<string, BatchRequestOutcome>> {
  const out: Record<string, BatchRequestOutcome> = {};
  for await (const o of readBatchOutcomes(folders, manifest)) out[o.customId] = o;
  return out;
}
const textOf = (o: BatchRequestOutcome | undefined) => (o?.ok ? o.completion.text : o ? `${o.error.name}: ${o.error.message}` : undefined);

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'repost-it-batch-'));

describe('openai backend', () => {
  let server: ScriptedLlmServer;
  let dataDir: string;
  const clock = { now: Date.parse('2026-11-23T10:00:00Z') };
  const folders = () => new BatchFolders(dataDir);
  const client = (apiKey = 'batch-key') => new OpenAI({ baseURL: server.url, apiKey, maxRetries: 0, timeout: 10_000 });
  const backend = (c = client()) => new OpenAiBatchBackend({ client: c, folders: folders(), clock: () => new Date(clock.now) });

  const start = async (batches: ScriptedBatchOptions = {}) => {
    dataDir = tempDir();
    server = await startScriptedLlmServer(SCRIPT, { apiKey: 'batch-key', batches: { clock: () => clock.now, completeAfterMs: 3600_000, ...batches } });
  };
  afterEach(async () => {
    await server?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('hands a batch over, waits on the service, then reads every answer and error as a live call would', async () => {
    await start();
    const b = backend();
    const made = await b.submit(prepared('b-one', ['alpha', 'beta', 'limited', 'refused']));
    expect(made).toMatchObject({ state: 'waiting', backend: 'openai', requests: 4, remote: { batchId: 'batch_scripted_1', inputFileId: 'file-scripted-1', status: 'validating' } });
    expect(fs.readFileSync(folders().pathOf('b-one', 'requests'), 'utf8')).toBe(jsonlText(prepared('b-one', ['alpha', 'beta', 'limited', 'refused']).lines));

    const waiting = await b.poll('b-one');
    expect(waiting).toMatchObject({ state: 'waiting', detail: 'in_progress, 0 of 4 done' });
    expect(server.requests).toHaveLength(0);

    clock.now += 3600_000;
    const ended = await b.poll('b-one');
    expect(ended).toMatchObject({ state: 'ended', manifest: { state: 'ended', endStatus: 'completed', remote: { status: 'completed' } } });
    expect(ended.manifest.failure).toBeUndefined();
    for (const f of ['results', 'errors'] as const) expect(fs.existsSync(folders().pathOf('b-one', f))).toBe(true);

    const got = await outcomes(folders(), ended.manifest);
    expect(textOf(got['req-alpha'])).toBe('fixture sandbox answer for alpha');
    expect(got['req-alpha']).toMatchObject({ ok: true, completion: { finishReason: 'stop', usage: { promptTokens: expect.any(Number) } } });
    expect(textOf(got['req-beta'])).toBe('fixture sandbox answer for beta');
    expect(!got['req-limited']!.ok && got['req-limited']!.error).toBeInstanceOf(LlmTransientError);
    expect(!got['req-limited']!.ok && got['req-limited']!.error.status).toBe(429);
    expect(!got['req-refused']!.ok && got['req-refused']!.error).toBeInstanceOf(LlmPermanentError);
    expect(!got['req-refused']!.ok && got['req-refused']!.error.message).toMatch(/in batch b-one \(openai\)/);

    // Polling an ended batch asks the service nothing more.
    const before = server.batchStats();
    expect((await b.poll('b-one')).state).toBe('ended');
    expect(server.batchStats()).toEqual(before);
    expect(before).toMatchObject({ filesUploaded: 1, batchesCreated: 1, linesProduced: 4 });
    expect(Object.values(before.linesByCustomId)).toEqual([1, 1, 1, 1]);
  });

  it('asks a batch line exactly what the live call asked', async () => {
    await start({ completeAfterMs: 0 });
    const config = loadConfig({ env: {}, overrides: { dataDir, llm: { baseUrl: server.url, apiKey: 'batch-key', model: 'scripted-batch', maxTokens: 300 } } });
    const store = new LocalStore(dataDir);
    const p = renderPrompt('sandbox', { functionName: 'gamma', filePath: 'm.py', context: 'def gamma():\n    pass\n' });
    const live = await new LlmGateway(config, store).chat({ step: 'sandbox', functionId: 'fn-gamma', messages: p.messages });
    const record = await store.getJson<ExchangeRecord>(live.exchangeKey);
    await backend().submit({ id: 'b-same', lines: [batchRequestLine('req-gamma', record.request)] });
    await backend().poll('b-same');
    const [viaChat, viaBatch] = server.requests;
    expect(viaBatch!.batch).toEqual({ batchId: 'batch_scripted_1', customId: 'req-gamma' });
    const asked = (r: typeof viaChat) => ({ model: r!.model, messages: r!.messages, temperature: r!.temperature, maxTokens: r!.maxTokens, kind: r!.kind, functionName: r!.functionName });
    expect(asked(viaBatch)).toEqual(asked(viaChat));
  });

  it('never hands a batch over twice: a second submit, a restarted backend, a crash before the service id was written', async () => {
    await start();
    await backend().submit(prepared('b-two', ['alpha', 'beta']));
    await backend().submit(prepared('b-two', ['alpha', 'beta']));
    expect((await backend().poll('b-two')).state).toBe('waiting');
    expect(server.batchStats()).toMatchObject({ filesUploaded: 1, batchesCreated: 1 });

    // A crash between the service's batch creation and the manifest update: the batch is found by its metadata.
    const f = folders();
    const manifest = await makeBatchFolder(f, 'openai', prepared('b-three', ['alpha']), new Date(clock.now));
    const c = client();
    const file = await c.files.create({ file: fs.createReadStream(f.pathOf('b-three', 'requests')), purpose: 'batch' });
    await c.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { [BATCH_METADATA_KEY]: 'b-three' } });
    expect(manifest.remote).toBeUndefined();
    const resumed = await backend().poll('b-three');
    expect(resumed).toMatchObject({ state: 'waiting', manifest: { remote: { batchId: 'batch_scripted_2' } } });
    expect(server.batchStats()).toMatchObject({ filesUploaded: 2, batchesCreated: 2 });

    clock.now += 3600_000;
    for (const id of ['b-two', 'b-three']) expect((await backend().poll(id)).state).toBe('ended');
    expect(server.batchStats().linesByCustomId).toEqual({ 'req-alpha': 2, 'req-beta': 1 });
  });

  it('ends an expired, a cancelled and a failed batch with a transient "no answer" for each request, naming why', async () => {
    await start({ completeAfterMs: 48 * 3600_000, expireAfterMs: 24 * 3600_000, maxRequests: 2 });
    const b = backend();
    await b.submit(prepared('b-exp', ['alpha']));
    await b.submit(prepared('b-cancel', ['beta']));
    await b.submit(prepared('b-fail', ['alpha', 'beta', 'gamma']));
    // The scripted service goes from cancelling to cancelled at the next look, which cancel() takes.
    const cancelled = await b.cancel('b-cancel');
    expect(cancelled.manifest).toMatchObject({ state: 'ended', endStatus: 'cancelled' });
    expect(textOf((await outcomes(folders(), cancelled.manifest))['req-beta'])).toMatch(/LlmTransientError: LLM batch: the batch was cancelled before this request ran/);

    const failed = await b.poll('b-fail');
    expect(failed.manifest).toMatchObject({ state: 'ended', endStatus: 'failed' });
    expect(failed.manifest.failure).toMatch(/ended failed: too_many_requests: The file holds more than 2 requests/);
    const failedOutcomes = await outcomes(folders(), failed.manifest);
    expect(Object.keys(failedOutcomes).sort()).toEqual(['req-alpha', 'req-beta', 'req-gamma']);
    expect(textOf(failedOutcomes['req-gamma'])).toMatch(/LlmTransientError: LLM batch: no answer for this request .*too_many_requests/);

    clock.now += 24 * 3600_000;
    const expired = await b.poll('b-exp');
    expect(expired.manifest).toMatchObject({ state: 'ended', endStatus: 'expired' });
    expect(textOf((await outcomes(folders(), expired.manifest))['req-alpha'])).toMatch(/the batch expired before this request ran/);
    expect(server.requests).toHaveLength(0);
  });

  it('reports the service refusing it as the live path does, and keeps the batch as it was', async () => {
    await start();
    await backend().submit(prepared('b-key', ['alpha']));
    const before = fs.readFileSync(folders().pathOf('b-key', 'manifest'), 'utf8');
    const err = await backend(client('wrong-key')).poll('b-key').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmPermanentError);
    expect((err as Error).message).toMatch(/authentication failed.*\(model \(batch b-key\) at http/);
    expect(fs.readFileSync(folders().pathOf('b-key', 'manifest'), 'utf8')).toBe(before);
  });
});

describe('files backend', () => {
  let dataDir: string;
  const now = new Date('2026-11-23T10:00:00Z');
  beforeEach(() => {
    dataDir = tempDir();
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  /** An answer line in the Batch API's output format, as another program would write it (fixture). */
  const answer = (customId: string, text: string) =>
    JSON.stringify({ id: `x-${customId}`, custom_id: customId, response: { status_code: 200, request_id: 'r', body: { choices: [{ message: { content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 3 } } }, error: null });

  /** A helper that answers a request file the way `vllm run-batch` would, line by line (fixture answers). */
  const answerAll = (lines: BatchRequestLine[]) => lines.map((l) => answer(l.custom_id, `fixture answer to ${l.custom_id}`)).join('\n') + '\n';

  it('writes the request file, waits for results.jsonl, and takes it once it is whole', async () => {
    const folders = new BatchFolders(dataDir);
    const b = new FileExchangeBackend(folders, () => now);
    const batch = prepared('b-files', ['alpha', 'beta', 'gamma']);
    const made = await b.submit(batch);
    expect(made).toMatchObject({ backend: 'files', state: 'waiting', requests: 3, createdAt: now.toISOString() });
    const requestFile = path.join(dataDir, 'llm-batches', 'b-files', 'requests.jsonl');
    expect(fs.readFileSync(requestFile, 'utf8')).toBe(jsonlText(batch.lines));
    expect(await b.poll('b-files')).toMatchObject({ state: 'waiting', detail: `waiting for ${path.join(dataDir, 'llm-batches', 'b-files', 'results.jsonl')}` });

    const results = folders.pathOf('b-files', 'results');
    const full = answerAll(batch.lines);
    // Being written: two lines and a part of the third, no final newline.
    fs.writeFileSync(results, full.slice(0, full.length - 40));
    expect(await b.poll('b-files')).toMatchObject({ state: 'waiting', detail: expect.stringMatching(/is still being written \(2 of 3 answered so far\)/) });
    // Two whole lines: some requests are still unanswered.
    fs.writeFileSync(results, full.split('\n').slice(0, 2).join('\n') + '\n');
    expect(await b.poll('b-files')).toMatchObject({ state: 'waiting', detail: expect.stringMatching(/answers 2 of 3 requests/) });
    // One request failed in the other program: its line says so with a status.
    fs.writeFileSync(results, full.split('\n').slice(0, 2).join('\n') + '\n' + JSON.stringify({ id: 'v', custom_id: 'req-gamma', response: { status_code: 400, request_id: 'r' }, error: 'prompt too long' }) + '\n');
    const ended = await b.poll('b-files');
    expect(ended).toMatchObject({ state: 'ended', manifest: { endStatus: 'completed', endedAt: now.toISOString() } });
    const got = await outcomes(folders, ended.manifest);
    expect(textOf(got['req-alpha'])).toBe('fixture answer to req-alpha');
    expect(!got['req-gamma']!.ok && got['req-gamma']!.error).toBeInstanceOf(LlmPermanentError);
    expect(textOf(got['req-gamma'])).toMatch(/prompt too long/);
  });

  it('names the file and line of a result line that is broken or answers a request the batch does not have', async () => {
    const folders = new BatchFolders(dataDir);
    const b = new FileExchangeBackend(folders, () => now);
    const batch = prepared('b-bad', ['alpha', 'beta']);
    await b.submit(batch);
    const results = folders.pathOf('b-bad', 'results');
    fs.writeFileSync(results, `${answer('req-alpha', 'a')}\nnot json\n${answer('req-beta', 'b')}\n`);
    await expect(b.poll('b-bad')).rejects.toMatchObject({ name: 'BatchFileError', line: 2, message: `${results} line 2 is not JSON: ${errorOfJsonParse('not json')}` });
    fs.writeFileSync(results, `${answer('req-alpha', 'a')}\n${answer('req-other', 'b')}\n`);
    await expect(b.poll('b-bad')).rejects.toThrow(`${results} line 2: custom_id req-other is not a request of batch b-bad`);
    fs.writeFileSync(results, `${answer('req-alpha', 'a')}\n${answer('req-alpha', 'b')}\n`);
    await expect(b.poll('b-bad')).rejects.toThrow(`${results} line 2: custom_id req-alpha is answered twice`);
    expect((await folders.readManifest('b-bad')).state).toBe('waiting');
  });

  it('keeps every path inside the batch folder: ids checked, links refused', async () => {
    const folders = new BatchFolders(dataDir);
    const b = new FileExchangeBackend(folders, () => now);
    for (const bad of ['../outside', '..', 'a/b', 'B-1']) {
      expect(() => folders.folderOf(bad)).toThrow(BatchNotFoundError);
      await expect(b.poll(bad)).rejects.toThrow(/not a batch id/);
      await expect(b.submit({ id: bad, lines: prepared('x', ['a']).lines })).rejects.toThrow(/not a batch id/);
    }
    expect(fs.readdirSync(dataDir)).toEqual([]);

    const batch = prepared('b-link', ['alpha']);
    await b.submit(batch);
    const outside = path.join(dataDir, 'elsewhere.jsonl');
    fs.writeFileSync(outside, answerAll(batch.lines));
    fs.symlinkSync(outside, folders.pathOf('b-link', 'results'));
    await expect(b.poll('b-link')).rejects.toThrow(/results\.jsonl is not a regular file; refusing to follow it/);

    // A batch folder that is a link to another place is no batch folder.
    const target = path.join(dataDir, 'real-folder');
    fs.cpSync(folders.folderOf('b-link'), target, { recursive: true });
    fs.symlinkSync(target, path.join(folders.root, 'b-linked'));
    await expect(folders.readManifest('b-linked')).rejects.toThrow(/is not a folder; refusing to follow it/);
    expect((await folders.list()).problems).toEqual([{ name: 'b-linked', problem: 'not a folder' }]);
  });

  it('refuses a batch it cannot hand over: too many requests, a custom_id twice, no requests', async () => {
    const folders = new BatchFolders(dataDir);
    const line = batchRequestLine('r', { model: 'm', messages: [{ role: 'user', content: 'q' }], temperature: 0, maxTokens: 1 });
    const many = Array.from({ length: 50_001 }, (_, i) => ({ ...line, custom_id: `r-${i}` }));
    await expect(makeBatchFolder(folders, 'files', { id: 'b-many', lines: many }, now)).rejects.toThrow(/50001 requests, more than the 50000/);
    await expect(makeBatchFolder(folders, 'files', { id: 'b-twice', lines: [line, line] }, now)).rejects.toThrow(BatchRejectedError);
    await expect(makeBatchFolder(folders, 'files', { id: 'b-none', lines: [] }, now)).rejects.toThrow(/has no requests/);
    const exactly = await makeBatchFolder(folders, 'files', { id: 'b-max', lines: many.slice(0, 50_000) }, now);
    expect(exactly.requests).toBe(50_000);
    await expect(makeBatchFolder(folders, 'openai', { id: 'b-max', lines: many.slice(0, 1) }, now)).rejects.toThrow(/made for the files backend/);
  });

  it('imports a results file made elsewhere into the batch that asked it, checking every line first', async () => {
    const folders = new BatchFolders(dataDir);
    const b = new FileExchangeBackend(folders, () => now);
    const one = prepared('b-imp-1', ['alpha', 'beta', 'gamma']);
    await b.submit(one);
    await b.submit(prepared('b-imp-2', ['delta']));
    const elsewhere = tempDir();
    const file = path.join(elsewhere, 'out.jsonl');

    fs.writeFileSync(file, `${answer('req-alpha', 'a')}\n{broken\n`);
    await expect(importBatchResults(folders, file, { now })).rejects.toMatchObject({ name: 'BatchFileError', line: 2 });
    fs.writeFileSync(file, `${answer('req-alpha', 'a')}\n${answer('req-nobody', 'b')}\n`);
    await expect(importBatchResults(folders, file, { now })).rejects.toThrow(/no waiting batch .* asked every custom_id/);
    await expect(importBatchResults(folders, file, { now, batchId: 'b-imp-1' })).rejects.toThrow('custom_id req-nobody is not a request of batch b-imp-1');
    fs.writeFileSync(file, `${answer('req-alpha', 'a')}\n${answer('req-beta', 'b')}\n`);
    await expect(importBatchResults(folders, file, { now })).rejects.toThrow(/answers 2 of batch b-imp-1's 3 requests; give --partial/);
    expect(fs.existsSync(folders.pathOf('b-imp-1', 'results'))).toBe(false);

    const imported = await importBatchResults(folders, file, { now, partial: true });
    expect(imported).toEqual({ batchId: 'b-imp-1', file: folders.pathOf('b-imp-1', 'results'), requests: 3, answered: 2, partial: true });
    expect(fs.readFileSync(imported.file, 'utf8')).toBe(fs.readFileSync(file, 'utf8'));
    expect((await folders.readManifest('b-imp-1')).imported).toMatchObject({ answered: 2, partial: true, source: file });
    await expect(importBatchResults(folders, file, { now, partial: true, batchId: 'b-imp-1' })).rejects.toThrow(/already has .*results\.jsonl; nothing was changed/);

    const ended = await b.poll('b-imp-1');
    expect(ended.state).toBe('ended');
    const got = await outcomes(folders, ended.manifest);
    expect(textOf(got['req-beta'])).toBe('b');
    expect(textOf(got['req-gamma'])).toMatch(/LlmTransientError: LLM batch: no answer for this request/);
    fs.rmSync(elsewhere, { recursive: true, force: true });
  });

  it('names the batch to import into when two waiting batches asked the same custom_ids', async () => {
    const folders = new BatchFolders(dataDir);
    const b = new FileExchangeBackend(folders, () => now);
    await b.submit(prepared('b-a', ['alpha']));
    await b.submit(prepared('b-b', ['alpha']));
    const file = path.join(dataDir, 'out.jsonl');
    fs.writeFileSync(file, `${answer('req-alpha', 'a')}\n`);
    await expect(importBatchResults(folders, file, { now })).rejects.toThrow(BatchImportError);
    await expect(importBatchResults(folders, file, { now })).rejects.toThrow(/batches b-a, b-b all asked .*; name one with --batch/);
    expect((await importBatchResults(folders, file, { now, batchId: 'b-b' })).batchId).toBe('b-b');
    expect((await b.poll('b-b')).state).toBe('ended');
    expect((await b.poll('b-a')).state).toBe('waiting');
  });

  it('cancels a waiting batch: its requests end without an answer', async () => {
    const folders = new BatchFolders(dataDir);
    const b = new FileExchangeBackend(folders, () => now);
    await b.submit(prepared('b-stop', ['alpha']));
    const ended = await b.cancel('b-stop');
    expect(ended.manifest).toMatchObject({ state: 'ended', endStatus: 'cancelled' });
    expect(textOf((await outcomes(folders, ended.manifest))['req-alpha'])).toMatch(/the batch was cancelled before its results arrived/);
  });
});

/** The message JSON.parse gives for `text` (it differs between Node versions). */
function errorOfJsonParse(text: string): string {
  try {
    JSON.parse(text);
  } catch (err) {
    return (err as Error).message;
  }
  return '';
}
