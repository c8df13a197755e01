/**
 * A scripted OpenAI-compatible LLM server, for tests and the offline demo. It implements
 * `POST /v1/chat/completions` and `GET /v1/models` and answers from a script instead of a model:
 *
 *   rules: [{ kind: 'sandbox', functionName: 'extract_all_zip_codes', responses: ['...', '...'] }, ...]
 *
 * A request is matched to the first rule whose `kind` and `functionName` (both optional) fit.
 * Both are read from the marker line the prompt renderer puts at the end of the user message,
 * `[prompt:<kind> v<version> function:<name>]`; requests without a marker fall back to the
 * `x-repost-step` header for the kind and to `Function: <name>` lines for the function. Each
 * function walks through a rule's responses in order (first sandbox attempt, second, ...);
 * once they are used up the last one repeats. A rule with `respondBy: 'turn'` picks instead by
 * the conversation's turn (the number of answers the request already holds: 0 for a first
 * request, 1 for the follow-up after an unusable answer, ...), so a request sent again (a retry
 * after a lost worker) gets the same answer as the first time. `{{functionName}}` in a scripted response is
 * replaced by the matched function's name, so one rule can serve many functions.
 *
 * A response may instead be a fault, to exercise the client's failure handling:
 *   429 (with Retry-After), 500, 400/401/404, 'slow' (answers after delayMs, past a client
 *   timeout), 'malformed' (HTTP 200 with a broken JSON body), 'truncated' (finish_reason
 *   "length", the text cut short), 'reset' (the connection is dropped).
 *
 * Faults can also be injected at random (`injectFaults`: a share of requests, seeded), before a
 * scripted response is used, so the retried request gets the answer the script holds for it.
 *
 * It also serves the Batch API (`batch-api.ts`: file upload and download, batch create,
 * retrieve, list and cancel, on a clock of its own, with chosen lines failing): each request line
 * is answered from the same script, in the same order per function, as the chat endpoint would
 * answer it; a fault becomes the line's status (429, 500, 400, ...) or, for 'reset', a
 * `request_timeout` error; 'slow' answers at once and 'malformed' is a body without choices.
 *
 * Usage in replies is counted roughly (characters / 4). With `promptCache`, the server acts as an
 * endpoint with a prompt cache: a prompt's longest common prefix with an earlier prompt (any
 * function, same model) counts as cached from `minTokens` on, in steps of `stepTokens`, and is
 * reported as `usage.prompt_tokens_details.cached_tokens`. Run it standalone for the demo:
 *   tsx scripts/scripted-llm/server.ts --script test/fixtures/scripted-llm/<file>.json [--port 8399] [--latency-ms N] [--prompt-cache]
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { createScriptedBatchApi, type BatchLineAnswer, type ScriptedBatchOptions, type ScriptedBatchStats } from './batch-api';
import { runCommand, UsageError } from '../lib/cli';
import { seededRandom } from '../lib/seeded-random';

export type ScriptedFault = {
  fault: '429' | '500' | '400' | '401' | '404' | 'slow' | 'malformed' | 'truncated' | 'reset';
  /** For 429: the Retry-After header in seconds. */
  retryAfterSec?: number;
  /** For 'slow': how long to wait before answering. */
  delayMs?: number;
  /** For 'slow' and 'truncated': the text to (partially) send. */
  text?: string;
};

export type ScriptedResponse = string | ScriptedFault;

export interface ScriptedRule {
  kind?: string;
  functionName?: string;
  responses: ScriptedResponse[];
  /** 'order' (default): each request takes the next response; 'turn': the response of the conversation's turn. */
  respondBy?: 'order' | 'turn';
}

export interface LlmScript {
  rules: ScriptedRule[];
  /** Answer for requests no rule matches; without it they get HTTP 400 naming kind and function. */
  fallback?: string;
}

const FaultSchema = z.object({
  fault: z.enum(['429', '500', '400', '401', '404', 'slow', 'malformed', 'truncated', 'reset']),
  retryAfterSec: z.number().nonnegative().optional(),
  delayMs: z.number().int().nonnegative().optional(),
  text: z.string().optional(),
});

export const LlmScriptSchema = z.object({
  /** Free text saying what the script is for; ignored by the server. */
  description: z.string().optional(),
  rules: z.array(
    z.object({
      kind: z.string().min(1).optional(),
      functionName: z.string().min(1).optional(),
      responses: z.array(z.union([z.string(), FaultSchema])).min(1),
      respondBy: z.enum(['order', 'turn']).optional(),
    }),
  ),
  fallback: z.string().optional(),
});

/** Reads a script fixture (JSON) and validates it. */
export function loadLlmScript(file: string): LlmScript {
  const parsed = LlmScriptSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file}: not a scripted LLM fixture: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

export interface RecordedRequest {
  kind: string | null;
  functionName: string | null;
  model: string;
  messages: { role: string; content: string }[];
  temperature?: number;
  maxTokens?: number;
  /** Index of the matched rule, or null (fallback or no match). */
  rule: number | null;
  /** What was sent back: 'text', a fault name, or 'unmatched'. */
  reply: string;
  /** For a line of a batch: the batch and the line's custom_id. */
  batch?: { batchId: string; customId: string };
  status: number;
  headers: Record<string, string>;
  receivedAt: number;
}

export interface ScriptedLlmServer {
  /** Base URL for an OpenAI client; ends with /v1. */
  url: string;
  requests: RecordedRequest[];
  /** The Batch API's counters: uploads, batches, lines produced per custom_id. */
  batchStats(): ScriptedBatchStats;
  close(): Promise<void>;
}

export interface ScriptedServerOptions {
  /** 0 (default) = any free port. */
  port?: number;
  host?: string;
  /** Simulated model latency added to every reply. */
  latencyMs?: number;
  /** If set, requests must carry `Authorization: Bearer <apiKey>` or get 401. */
  apiKey?: string;
  /** Keep the request log (default true; benchmarks turn it off). */
  recordRequests?: boolean;
  /** Random transient faults: this share of requests fails with one of `kinds` (seeded, reproducible). */
  injectFaults?: InjectedFaults;
  /** The Batch API's clock, delays, line faults and limits. */
  batches?: ScriptedBatchOptions;
  /** The model names `GET /v1/models` lists (default: `scripted`); the answers do not depend on the model asked for. */
  servedModels?: string[];
  /** Act as an endpoint with a prompt cache (see the module's comment); off by default. */
  promptCache?: PromptCacheOptions;
}

export interface PromptCacheOptions {
  /** A shared prefix shorter than this is not cached (OpenAI: 1024). */
  minTokens?: number;
  /** Cached prefixes come in steps of this many tokens (OpenAI: 128). */
  stepTokens?: number;
  /** How many earlier prompts it keeps (default 512). */
  entries?: number;
}

/** The prompt tokens an endpoint's prefix cache would serve for `prompt`, then remembers it (rough tokens: characters / 4). */
export function promptCacheHit(seen: Map<string, string[]>, model: string, prompt: string, opts: PromptCacheOptions): number {
  const earlier = seen.get(model) ?? [];
  let longest = 0;
  for (const before of earlier) {
    const limit = Math.min(before.length, prompt.length);
    let i = 0;
    while (i < limit && before.charCodeAt(i) === prompt.charCodeAt(i)) i += 1;
    if (i > longest) longest = i;
  }
  earlier.push(prompt);
  if (earlier.length > (opts.entries ?? 512)) earlier.shift();
  seen.set(model, earlier);
  const tokens = Math.floor(longest / 4);
  const step = opts.stepTokens ?? 128;
  return tokens < (opts.minTokens ?? 1024) ? 0 : Math.floor(tokens / step) * step;
}

export interface InjectedFaults {
  rate: number;
  kinds: ('429' | '500' | 'timeout' | 'reset')[];
  seed?: number;
  /** How long a 'timeout' hangs before the server gives up on it (the client should time out first). */
  hangMs?: number;
}


const ChatBodySchema = z.object({
  model: z.string().min(1),
  messages: z.array(z.object({ role: z.string(), content: z.string().nullable().optional() }).passthrough()).min(1),
  temperature: z.number().optional(),
  max_tokens: z.number().optional(),
  max_completion_tokens: z.number().optional(),
  stream: z.boolean().optional(),
});

const MARKER_RE = /^\[prompt:([a-z_]+) v\d+(?: function:([^\]\s]+))?\]$/gm;

function identify(messages: { role: string; content: string }[], headers: http.IncomingHttpHeaders): { kind: string | null; functionName: string | null } {
  const all = messages.map((m) => m.content).join('\n');
  // The last marker of the request's own messages (an earlier answer quoted back is not the request's).
  const own = messages.filter((m) => m.role !== 'assistant').map((m) => m.content).join('\n');
  const markers = [...own.matchAll(MARKER_RE)];
  const marker = markers[markers.length - 1];
  const header = headers['x-repost-step'];
  const kind = marker?.[1] ?? (typeof header === 'string' ? header : null);
  const fromLine = /^Function:\s*([A-Za-z_][\w.]*)\s*$/m.exec(all)?.[1];
  return { kind, functionName: marker?.[2] ?? fromLine ?? null };
}

const roughTokens = (s: string) => Math.ceil(s.length / 4);

function errorBody(message: string, type: string, code: string | null = null): string {
  return JSON.stringify({ error: { message, type, param: null, code } });
}

/** The error a scripted fault answers with, the same over HTTP and in a batch's error file. */
const FAULT_ERRORS = {
  '429': (): [number, string] => [429, errorBody('Rate limit reached (scripted).', 'rate_limit_exceeded', 'rate_limit_exceeded')],
  '500': (): [number, string] => [500, errorBody('The server had an error while processing your request (scripted).', 'server_error')],
  '400': (): [number, string] => [400, errorBody('Invalid request (scripted).', 'invalid_request_error')],
  '401': (): [number, string] => [401, errorBody('Incorrect API key provided (scripted).', 'invalid_request_error', 'invalid_api_key')],
  '404': (model: string): [number, string] => [404, errorBody(`The model ${model} does not exist (scripted).`, 'invalid_request_error', 'model_not_found')],
};

export async function startScriptedLlmServer(script: LlmScript, opts: ScriptedServerOptions = {}): Promise<ScriptedLlmServer> {
  const checked = LlmScriptSchema.parse(script);
  const requests: RecordedRequest[] = [];
  const record = opts.recordRequests ?? true;
  /** Next response index per rule and function. */
  const cursors = new Map<string, number>();
  const sockets = new Set<import('node:net').Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let completionCounter = 0;
  const inject = opts.injectFaults;
  const random = seededRandom(inject?.seed ?? 1);

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      if (ms <= 0) return resolve();
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  const send = (res: http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  };

  const promptsSeen = new Map<string, string[]>();
  const completionBody = (model: string, promptText: string, text: string, finishReason: 'stop' | 'length') => ({
    id: `chatcmpl-scripted-${++completionCounter}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finishReason, logprobs: null }],
    usage: {
      prompt_tokens: roughTokens(promptText),
      completion_tokens: roughTokens(text),
      total_tokens: roughTokens(promptText) + roughTokens(text),
      ...(opts.promptCache ? { prompt_tokens_details: { cached_tokens: Math.min(promptCacheHit(promptsSeen, model, promptText, opts.promptCache), roughTokens(promptText)) } } : {}),
    },
  });
  const completion = (model: string, promptText: string, text: string, finishReason: 'stop' | 'length') => JSON.stringify(completionBody(model, promptText, text, finishReason));

  /** The scripted response for a request (the first matching rule's next one, else the fallback), or null when none. */
  const pick = (kind: string | null, functionName: string | null, messages: { role: string }[]): { rule: number | null; response: ScriptedResponse | null } => {
    const ruleIndex = checked.rules.findIndex((r) => (r.kind === undefined || r.kind === kind) && (r.functionName === undefined || r.functionName === functionName));
    if (ruleIndex < 0) return { rule: null, response: checked.fallback ?? null };
    const rule = checked.rules[ruleIndex]!;
    let i: number;
    if (rule.respondBy === 'turn') i = messages.filter((m) => m.role === 'assistant').length;
    else {
      const cursorKey = `${ruleIndex}\u0000${functionName ?? ''}`;
      i = cursors.get(cursorKey) ?? 0;
      cursors.set(cursorKey, i + 1);
    }
    return { rule: ruleIndex, response: rule.responses[Math.min(i, rule.responses.length - 1)]! };
  };
  const unmatchedMessage = (kind: string | null, functionName: string | null) => `scripted LLM server: no rule for kind=${kind ?? '?'} function=${functionName ?? '?'}`;
  const fillFor = (functionName: string | null) => (s: string) => s.replace(/\{\{functionName\}\}/g, functionName ?? 'f');

  /** A batch's request line, answered as the chat endpoint answers the same request. */
  const answerLine = (rawBody: unknown, line: { batchId: string; customId: string }): BatchLineAnswer => {
    const parsed = ChatBodySchema.safeParse(rawBody);
    if (!parsed.success) return { status: 400, body: JSON.parse(errorBody(`invalid chat request: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`, 'invalid_request_error')) };
    const body = parsed.data;
    const messages = body.messages.map((m) => ({ role: m.role, content: m.content ?? '' }));
    const { kind, functionName } = identify(messages, {});
    const { rule, response } = pick(kind, functionName, messages);
    const entry: RecordedRequest = {
      kind,
      functionName,
      model: body.model,
      messages,
      temperature: body.temperature,
      maxTokens: body.max_tokens ?? body.max_completion_tokens,
      rule,
      reply: 'unmatched',
      status: 0,
      headers: {},
      receivedAt: Date.now(),
      batch: line,
    };
    if (record) requests.push(entry);
    const promptText = messages.map((m) => m.content).join('\n');
    const fill = fillFor(functionName);
    const status = (code: number, what: string, text: string): BatchLineAnswer => {
      entry.status = code;
      entry.reply = what;
      return { status: code, body: JSON.parse(text) };
    };
    if (response === null) return status(400, 'unmatched', errorBody(unmatchedMessage(kind, functionName), 'invalid_request_error', 'no_scripted_response'));
    if (typeof response === 'string') return status(200, 'text', completion(body.model, promptText, fill(response), 'stop'));
    switch (response.fault) {
      case '429':
      case '500':
      case '400':
      case '401':
      case '404': {
        const [code, text] = FAULT_ERRORS[response.fault](body.model);
        return status(code, response.fault, text);
      }
      case 'slow':
        return status(200, 'slow', completion(body.model, promptText, fill(response.text ?? 'slow answer'), 'stop'));
      case 'malformed':
        return status(200, 'malformed', JSON.stringify({ id: 'chatcmpl-scripted-broken', object: 'chat.completion', choices: [] }));
      case 'truncated':
        return status(200, 'truncated', completion(body.model, promptText, fill(response.text ?? '```python\ndef unfinished():\n    return [1, 2,'), 'length'));
      case 'reset':
        entry.reply = 'reset';
        return { error: { code: 'request_timeout', message: 'The request was dropped (scripted reset).' } };
    }
  };
  const batchApi = createScriptedBatchApi(answerLine, opts.batches);

  async function handleChat(req: http.IncomingMessage, res: http.ServerResponse, raw: string): Promise<void> {
    let body: z.infer<typeof ChatBodySchema>;
    try {
      const parsed = ChatBodySchema.safeParse(JSON.parse(raw));
      if (!parsed.success) return send(res, 400, errorBody(`invalid chat request: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`, 'invalid_request_error'));
      body = parsed.data;
    } catch {
      return send(res, 400, errorBody('request body is not JSON', 'invalid_request_error'));
    }
    if (body.stream) return send(res, 400, errorBody('the scripted LLM server does not stream; send stream: false', 'invalid_request_error'));
    const messages = body.messages.map((m) => ({ role: m.role, content: m.content ?? '' }));
    const { kind, functionName } = identify(messages, req.headers);
    const entry: RecordedRequest = {
      kind,
      functionName,
      model: body.model,
      messages,
      temperature: body.temperature,
      maxTokens: body.max_tokens ?? body.max_completion_tokens,
      rule: null,
      reply: 'unmatched',
      status: 0,
      headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('x-') || k === 'authorization').map(([k, v]) => [k, String(v)])),
      receivedAt: Date.now(),
    };
    if (record) requests.push(entry);
    const reply = (status: number, what: string, text: string, headers?: Record<string, string>) => {
      entry.status = status;
      entry.reply = what;
      send(res, status, text, headers);
    };

    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      return reply(401, '401', errorBody('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'));
    }
    await wait(opts.latencyMs ?? 0);

    if (inject && inject.kinds.length > 0 && random() < inject.rate) {
      const kind = inject.kinds[Math.floor(random() * inject.kinds.length)]!;
      switch (kind) {
        case '429':
          return reply(429, 'injected-429', errorBody('Rate limit reached (injected).', 'rate_limit_exceeded', 'rate_limit_exceeded'), { 'retry-after': '1' });
        case '500':
          return reply(500, 'injected-500', errorBody('Server error (injected).', 'server_error'));
        case 'reset':
          entry.reply = 'injected-reset';
          req.socket.destroy();
          return;
        case 'timeout':
          entry.reply = 'injected-timeout';
          await wait(inject.hangMs ?? 60_000);
          req.socket.destroy();
          return;
      }
    }

    const promptText = messages.map((m) => m.content).join('\n');
    const picked = pick(kind, functionName, messages);
    entry.rule = picked.rule;
    if (picked.response === null) return reply(400, 'unmatched', errorBody(unmatchedMessage(kind, functionName), 'invalid_request_error', 'no_scripted_response'));
    const response = picked.response;
    const fill = fillFor(functionName);

    if (typeof response === 'string') return reply(200, 'text', completion(body.model, promptText, fill(response), 'stop'));
    switch (response.fault) {
      case '429': {
        const sec = response.retryAfterSec ?? 1;
        const [code, text] = FAULT_ERRORS['429']();
        return reply(code, '429', text, { 'retry-after': String(sec) });
      }
      case '500':
      case '400':
      case '401':
      case '404': {
        const [code, text] = FAULT_ERRORS[response.fault](body.model);
        return reply(code, response.fault, text);
      }
      case 'slow':
        await wait(response.delayMs ?? 30_000);
        return reply(200, 'slow', completion(body.model, promptText, fill(response.text ?? 'slow answer'), 'stop'));
      case 'malformed':
        return reply(200, 'malformed', '{"id": "chatcmpl-scripted-broken", "choices": [{"message": {"content": "unterminated');
      case 'truncated': {
        const full = fill(response.text ?? '```python\ndef unfinished():\n    return [1, 2,');
        return reply(200, 'truncated', completion(body.model, promptText, full, 'length'));
      }
      case 'reset':
        entry.status = 0;
        entry.reply = 'reset';
        req.socket.destroy();
        return;
    }
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (/^\/v1\/(files|batches)(\/|$)/.test(url.pathname)) {
      if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
        req.resume();
        return send(res, 401, errorBody('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'));
      }
      batchApi.handle(req, res, url);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      if (req.method === 'POST' && url.pathname === '/v1/chat/completions') {
        handleChat(req, res, raw).catch((err: unknown) => send(res, 500, errorBody(`scripted server failure: ${(err as Error).message}`, 'server_error')));
      } else if (req.method === 'GET' && url.pathname === '/v1/models') {
        if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
          return send(res, 401, errorBody('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'));
        }
        const served = opts.servedModels ?? ['scripted'];
        send(res, 200, JSON.stringify({ object: 'list', data: served.map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted-llm-server' })) }));
      } else {
        send(res, 404, errorBody(`no route ${req.method} ${url.pathname}`, 'invalid_request_error'));
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}/v1`,
    requests,
    batchStats: () => batchApi.stats(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

async function serveStandalone(values: { script?: string; port?: string; 'latency-ms'?: string; 'prompt-cache'?: boolean }): Promise<void> {
  if (!values.script) throw new UsageError('give the script: --script <fixture.json>');
  const server = await startScriptedLlmServer(loadLlmScript(values.script), {
    port: Number(values.port ?? 0),
    latencyMs: Number(values['latency-ms'] ?? 0),
    recordRequests: false,
    ...(values['prompt-cache'] ? { promptCache: {} } : {}),
  });
  console.log(`scripted LLM server (${values.script}) listening at ${server.url}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
}

if (require.main === module) {
  runCommand({ file: __filename, options: { script: { type: 'string' }, port: { type: 'string' }, 'latency-ms': { type: 'string' }, 'prompt-cache': { type: 'boolean' } }, run: ({ values }) => serveStandalone(values) });
}
