/**
 * The Batch API part of the scripted LLM server: the endpoints the factory's batch mode uses,
 * answering every request line the way the server's chat endpoint answers the same request (the
 * server hands in `answer`), so a batch and a live crawl read the same fixtures.
 *
 *   POST /v1/files                  multipart upload (purpose `batch`), at most `maxBytes`
 *   GET  /v1/files/{id}             the file object
 *   GET  /v1/files/{id}/content     the file's bytes (input, output and error files)
 *   POST /v1/batches                a batch over an uploaded file (endpoint /v1/chat/completions, window 24h)
 *   GET  /v1/batches/{id}           the batch, advanced to "now" on its clock
 *   GET  /v1/batches                the batches, newest first (`limit`, `after`)
 *   POST /v1/batches/{id}/cancel    cancelling, then cancelled: its lines get `batch_cancelled`
 *
 * A batch moves on only when it is looked at, on its own clock (`clock`, default the wall clock,
 * so a test can drive it): `validating` until first looked at, then its input is checked (every
 * line JSON, a unique custom_id, POST to the batch's endpoint, a chat body; at most `maxRequests`)
 * and it is `failed` (with `errors`) or `in_progress`; once `completeAfterMs` have passed since it
 * was created, every line is answered at once and it is `completed`, with an output file (status
 * 200 lines) and an error file (other statuses and errors). Past `expireAfterMs` before that, it
 * is `expired` and every line gets `batch_expired`. `lineFault` makes chosen lines fail instead of
 * being answered: an HTTP status (429, 500, 400, ...) or a non-HTTP error code. Each line is
 * answered once; `stats()` counts lines per custom_id, uploads and batches, so a test can prove
 * that nothing was asked twice.
 */
import type * as http from 'node:http';
import { z } from 'zod';

/** What a line of a batch got: an HTTP response (status and body) or a non-HTTP error. */
export type BatchLineAnswer = { status: number; body: unknown } | { error: { code: string; message: string } };

/** A fault for chosen lines: an HTTP status instead of the answer, or a non-HTTP error code. */
export type BatchLineFault = { status: number; message?: string } | { error: string; message?: string };

export interface ScriptedBatchOptions {
  /** The batches' clock in milliseconds (default `Date.now`). */
  clock?: () => number;
  /** How long after its creation a batch completes (default 0: at the first look after validation). */
  completeAfterMs?: number;
  /** How long after its creation an unfinished batch expires (default 24 h). */
  expireAfterMs?: number;
  /** Lines that fail instead of being answered. */
  lineFault?: (line: { batchId: string; customId: string; index: number }) => BatchLineFault | null | undefined;
  /** Requests a batch may hold (default 50,000). */
  maxRequests?: number;
  /** Bytes an uploaded file may have (default 200 MB). */
  maxBytes?: number;
}

export interface ScriptedBatchStats {
  filesUploaded: number;
  batchesCreated: number;
  batchesCancelled: number;
  /** Lines produced (answered or failed) per custom_id, over every batch. */
  linesByCustomId: Record<string, number>;
  linesProduced: number;
}

interface StoredFile {
  id: string;
  bytes: Buffer;
  filename: string;
  purpose: string;
  createdAt: number;
}

type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

interface StoredBatch {
  id: string;
  inputFileId: string;
  endpoint: string;
  completionWindow: string;
  metadata: Record<string, string> | null;
  createdAt: number;
  status: BatchStatus;
  lines: { customId: string; body: unknown }[];
  outputFileId: string | null;
  errorFileId: string | null;
  counts: { total: number; completed: number; failed: number };
  errors: { code: string; message: string; line: number | null; param: string | null }[] | null;
  times: Partial<Record<'in_progress_at' | 'completed_at' | 'failed_at' | 'expired_at' | 'cancelling_at' | 'cancelled_at', number>>;
  seq: number;
}

const DAY_MS = 24 * 3600 * 1000;

const CreateBatchSchema = z.object({
  input_file_id: z.string().min(1),
  endpoint: z.string(),
  completion_window: z.string(),
  metadata: z.record(z.string().max(64), z.string().max(512)).nullish(),
});

const InputLineSchema = z.object({
  custom_id: z.string().min(1),
  method: z.string(),
  url: z.string(),
  body: z.object({ model: z.string().min(1), messages: z.array(z.unknown()).min(1) }).passthrough(),
});

function errorBody(message: string, type: string, code: string | null = null): string {
  return JSON.stringify({ error: { message, type, param: null, code } });
}

export interface ScriptedBatchApi {
  /** Handles a request under /v1/files or /v1/batches; false when the path is not one of them. */
  handle(req: http.IncomingMessage, res: http.ServerResponse, url: URL): boolean;
  stats(): ScriptedBatchStats;
}

export function createScriptedBatchApi(answer: (body: unknown, line: { batchId: string; customId: string }) => BatchLineAnswer, opts: ScriptedBatchOptions = {}): ScriptedBatchApi {
  const clock = opts.clock ?? Date.now;
  const maxRequests = opts.maxRequests ?? 50_000;
  const maxBytes = opts.maxBytes ?? 200 * 1024 * 1024;
  const files = new Map<string, StoredFile>();
  const batches = new Map<string, StoredBatch>();
  const counts = { files: 0, batches: 0, cancelled: 0, lines: 0, requestIds: 0 };
  const linesByCustomId = new Map<string, number>();
  const sec = (ms: number) => Math.floor(ms / 1000);

  const send = (res: http.ServerResponse, status: number, body: string | Buffer, type = 'application/json') => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };

  const fileObject = (f: StoredFile) => ({ id: f.id, object: 'file', bytes: f.bytes.length, created_at: sec(f.createdAt), filename: f.filename, purpose: f.purpose, status: 'processed' });

  const storeFile = (bytes: Buffer, filename: string, purpose: string): StoredFile => {
    const f = { id: `file-scripted-${++counts.files}`, bytes, filename, purpose, createdAt: clock() };
    files.set(f.id, f);
    return f;
  };

  const batchObject = (b: StoredBatch) => ({
    id: b.id,
    object: 'batch',
    endpoint: b.endpoint,
    errors: b.errors ? { object: 'list', data: b.errors } : null,
    input_file_id: b.inputFileId,
    completion_window: b.completionWindow,
    status: b.status,
    output_file_id: b.outputFileId,
    error_file_id: b.errorFileId,
    created_at: sec(b.createdAt),
    expires_at: sec(b.createdAt + (opts.expireAfterMs ?? DAY_MS)),
    ...Object.fromEntries(Object.entries(b.times).map(([k, v]) => [k, sec(v)])),
    request_counts: b.counts,
    metadata: b.metadata,
  });

  /** Writes the output and error files of a batch from its lines' answers. */
  const finish = (b: StoredBatch, lineOf: (line: StoredBatch['lines'][number], index: number) => BatchLineAnswer) => {
    const out: string[] = [];
    const err: string[] = [];
    b.lines.forEach((line, index) => {
      const got = lineOf(line, index);
      counts.lines++;
      linesByCustomId.set(line.customId, (linesByCustomId.get(line.customId) ?? 0) + 1);
      const requestId = `req_scripted_${++counts.requestIds}`;
      const text =
        'error' in got
          ? JSON.stringify({ id: `batch_req_${counts.requestIds}`, custom_id: line.customId, response: null, error: got.error })
          : JSON.stringify({ id: `batch_req_${counts.requestIds}`, custom_id: line.customId, response: { status_code: got.status, request_id: requestId, body: got.body }, error: null });
      if (!('error' in got) && got.status === 200) {
        out.push(text);
        b.counts.completed++;
      } else {
        err.push(text);
        b.counts.failed++;
      }
    });
    if (out.length) b.outputFileId = storeFile(Buffer.from(`${out.join('\n')}\n`), `${b.id}_output.jsonl`, 'batch_output').id;
    if (err.length) b.errorFileId = storeFile(Buffer.from(`${err.join('\n')}\n`), `${b.id}_error.jsonl`, 'batch_output').id;
  };

  /** Checks a batch's input file; returns its lines, or the errors that fail it. */
  const validate = (b: StoredBatch): { lines: StoredBatch['lines'] } | { errors: NonNullable<StoredBatch['errors']> } => {
    const file = files.get(b.inputFileId)!;
    const errors: NonNullable<StoredBatch['errors']> = [];
    const lines: StoredBatch['lines'] = [];
    const seen = new Set<string>();
    const texts = file.bytes.toString('utf8').split('\n');
    texts.forEach((text, i) => {
      if (text.trim() === '') return;
      const lineNo = i + 1;
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        errors.push({ code: 'invalid_json_line', message: 'This line is not parseable as valid JSON.', line: lineNo, param: null });
        return;
      }
      const parsed = InputLineSchema.safeParse(raw);
      if (!parsed.success) {
        errors.push({ code: 'invalid_request', message: `${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`, line: lineNo, param: null });
      } else if (parsed.data.method !== 'POST' || parsed.data.url !== b.endpoint) {
        errors.push({ code: 'mismatched_endpoint', message: `The line asks ${parsed.data.method} ${parsed.data.url}, the batch is for POST ${b.endpoint}.`, line: lineNo, param: 'url' });
      } else if (seen.has(parsed.data.custom_id)) {
        errors.push({ code: 'duplicate_custom_id', message: `The custom_id ${parsed.data.custom_id} is used more than once.`, line: lineNo, param: 'custom_id' });
      } else {
        seen.add(parsed.data.custom_id);
        lines.push({ customId: parsed.data.custom_id, body: parsed.data.body });
      }
    });
    if (lines.length + errors.length > maxRequests) errors.push({ code: 'too_many_requests', message: `The file holds more than ${maxRequests} requests.`, line: null, param: null });
    if (lines.length === 0 && errors.length === 0) errors.push({ code: 'empty_file', message: 'The input file holds no requests.', line: null, param: null });
    return errors.length ? { errors } : { lines };
  };

  /** Brings a batch to where it stands now on the clock. */
  const advance = (b: StoredBatch) => {
    const now = clock();
    if (b.status === 'validating') {
      const checked = validate(b);
      if ('errors' in checked) {
        b.status = 'failed';
        b.errors = checked.errors;
        b.times.failed_at = now;
        return;
      }
      b.lines = checked.lines;
      b.counts.total = checked.lines.length;
      b.status = 'in_progress';
      b.times.in_progress_at = now;
    }
    if (b.status === 'cancelling') {
      finish(b, () => ({ error: { code: 'batch_cancelled', message: 'The batch was cancelled before this request ran.' } }));
      b.status = 'cancelled';
      b.times.cancelled_at = now;
      counts.cancelled++;
      return;
    }
    if (b.status !== 'in_progress') return;
    const expireAfter = opts.expireAfterMs ?? DAY_MS;
    const completeAfter = opts.completeAfterMs ?? 0;
    if (now - b.createdAt >= expireAfter && completeAfter >= expireAfter) {
      finish(b, () => ({ error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' } }));
      b.status = 'expired';
      b.times.expired_at = now;
      return;
    }
    if (now - b.createdAt < completeAfter) return;
    finish(b, (line, index) => {
      const fault = opts.lineFault?.({ batchId: b.id, customId: line.customId, index });
      if (fault && 'error' in fault) return { error: { code: fault.error, message: fault.message ?? `scripted error ${fault.error}` } };
      if (fault) return { status: fault.status, body: JSON.parse(errorBody(fault.message ?? `scripted status ${fault.status}`, fault.status === 429 ? 'rate_limit_exceeded' : fault.status >= 500 ? 'server_error' : 'invalid_request_error')) };
      return answer(line.body, { batchId: b.id, customId: line.customId });
    });
    b.status = 'completed';
    b.times.completed_at = now;
  };

  /** Reads a request body, refusing more than `limit` bytes. */
  const readBody = (req: http.IncomingMessage, limit: number) =>
    new Promise<Buffer | null>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > limit) {
          resolve(null);
          req.removeAllListeners('data');
          req.resume();
          return;
        }
        chunks.push(c);
      });
      req.on('end', () => resolve(size > limit ? null : Buffer.concat(chunks)));
      req.on('error', reject);
    });

  async function upload(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const type = req.headers['content-type'] ?? '';
    if (!type.startsWith('multipart/form-data')) return send(res, 400, errorBody('Upload a file as multipart/form-data.', 'invalid_request_error'));
    // Multipart overhead on top of the file itself.
    const raw = await readBody(req, maxBytes + 64 * 1024);
    if (!raw) return send(res, 413, errorBody(`The file is larger than ${maxBytes} bytes.`, 'invalid_request_error', 'file_too_large'));
    let form: FormData;
    try {
      form = await new Response(new Uint8Array(raw), { headers: { 'content-type': type } }).formData();
    } catch (err) {
      return send(res, 400, errorBody(`Malformed multipart body: ${(err as Error).message}`, 'invalid_request_error'));
    }
    const purpose = form.get('purpose');
    const file = form.get('file');
    if (purpose !== 'batch') return send(res, 400, errorBody(`The scripted server takes purpose "batch" only, got ${JSON.stringify(purpose)}.`, 'invalid_request_error'));
    if (!file || typeof file === 'string') return send(res, 400, errorBody('No file in the upload.', 'invalid_request_error'));
    const bytes = Buffer.from(await file.arrayBuffer());
    if (bytes.length > maxBytes) return send(res, 413, errorBody(`The file is larger than ${maxBytes} bytes.`, 'invalid_request_error', 'file_too_large'));
    send(res, 200, JSON.stringify(fileObject(storeFile(bytes, file.name || 'upload.jsonl', 'batch'))));
  }

  async function create(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const raw = await readBody(req, 1024 * 1024);
    let body: z.infer<typeof CreateBatchSchema>;
    try {
      const parsed = CreateBatchSchema.safeParse(JSON.parse(raw?.toString('utf8') ?? ''));
      if (!parsed.success) return send(res, 400, errorBody(`invalid batch request: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`, 'invalid_request_error'));
      body = parsed.data;
    } catch {
      return send(res, 400, errorBody('request body is not JSON', 'invalid_request_error'));
    }
    const input = files.get(body.input_file_id);
    if (!input || input.purpose !== 'batch') return send(res, 400, errorBody(`No batch input file ${body.input_file_id}.`, 'invalid_request_error'));
    if (body.endpoint !== '/v1/chat/completions') return send(res, 400, errorBody(`The scripted server batches /v1/chat/completions only, not ${body.endpoint}.`, 'invalid_request_error'));
    if (body.completion_window !== '24h') return send(res, 400, errorBody('completion_window must be "24h".', 'invalid_request_error'));
    if (body.metadata && Object.keys(body.metadata).length > 16) return send(res, 400, errorBody('metadata holds at most 16 keys.', 'invalid_request_error'));
    counts.batches++;
    const b: StoredBatch = {
      id: `batch_scripted_${counts.batches}`,
      inputFileId: input.id,
      endpoint: body.endpoint,
      completionWindow: body.completion_window,
      metadata: body.metadata ?? null,
      createdAt: clock(),
      status: 'validating',
      lines: [],
      outputFileId: null,
      errorFileId: null,
      counts: { total: 0, completed: 0, failed: 0 },
      errors: null,
      times: {},
      seq: counts.batches,
    };
    batches.set(b.id, b);
    send(res, 200, JSON.stringify(batchObject(b)));
  }

  function list(res: http.ServerResponse, url: URL): void {
    const limit = Math.min(100, Math.max(1, Number(url.searchParams.get('limit') ?? 20) || 20));
    const after = url.searchParams.get('after');
    const all = [...batches.values()].sort((a, b) => b.seq - a.seq);
    const start = after ? all.findIndex((b) => b.id === after) + 1 : 0;
    const page = all.slice(start, start + limit);
    for (const b of page) advance(b);
    send(res, 200, JSON.stringify({ object: 'list', data: page.map(batchObject), first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: start + limit < all.length }));
  }

  function route(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> | void {
    const parts = url.pathname.split('/').filter(Boolean).slice(1); // after "v1"
    const [kind, id, action] = parts;
    if (kind === 'files') {
      if (req.method === 'POST' && parts.length === 1) return upload(req, res);
      const f = id ? files.get(id) : undefined;
      if (req.method === 'GET' && id && parts.length <= 3) {
        if (!f) return send(res, 404, errorBody(`No such File object: ${id}`, 'invalid_request_error'));
        if (action === 'content') return send(res, 200, f.bytes, 'application/octet-stream');
        if (action === undefined) return send(res, 200, JSON.stringify(fileObject(f)));
      }
    } else if (kind === 'batches') {
      if (req.method === 'POST' && parts.length === 1) return create(req, res);
      if (req.method === 'GET' && parts.length === 1) return list(res, url);
      const b = id ? batches.get(id) : undefined;
      if (id && !b) return send(res, 404, errorBody(`No batch found with id '${id}'.`, 'invalid_request_error'));
      if (b && req.method === 'GET' && parts.length === 2) {
        advance(b);
        return send(res, 200, JSON.stringify(batchObject(b)));
      }
      if (b && req.method === 'POST' && action === 'cancel' && parts.length === 3) {
        advance(b);
        if (b.status !== 'validating' && b.status !== 'in_progress') return send(res, 400, errorBody(`Cannot cancel a batch with status ${b.status}.`, 'invalid_request_error'));
        b.status = 'cancelling';
        b.times.cancelling_at = clock();
        return send(res, 200, JSON.stringify(batchObject(b)));
      }
    }
    send(res, 404, errorBody(`no route ${req.method} ${url.pathname}`, 'invalid_request_error'));
  }

  return {
    handle(req, res, url) {
      if (!/^\/v1\/(files|batches)(\/|$)/.test(url.pathname)) return false;
      Promise.resolve(route(req, res, url)).catch((err: unknown) => send(res, 500, errorBody(`scripted server failure: ${(err as Error).message}`, 'server_error')));
      return true;
    },
    stats: () => ({
      filesUploaded: [...files.values()].filter((f) => f.purpose === 'batch').length,
      batchesCreated: counts.batches,
      batchesCancelled: counts.cancelled,
      linesByCustomId: Object.fromEntries(linesByCustomId),
      linesProduced: counts.lines,
    }),
  };
}
