/**
 * The verification server's HTTP side (scripts/serve.ts listens; this answers): SandboxFusion's
 * `POST /run_code` for Python, `POST /verify` for this project's records, `GET /health` and
 * `GET /metrics`. Every run goes through one admission (admission.ts): at most `maxInFlight` run,
 * at most `maxQueued` wait, and past that a 429 with Retry-After at once. A body over the limit is
 * a 413, a missing or wrong bearer token a 401, a sandbox that is down a 503 with Retry-After.
 *
 * What a request names is looked up, never used as a path: a dataset by its name among those the
 * server was started with, a record by its id in that dataset. Code runs only in the sandbox.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { EvalDatasetLineSchema, toEvalRecord, type EvalRecord } from '../eval/dataset';
import { verifyAnswer } from '../eval/verdict';
import { testFunctionNames } from '../llm/sanity';
import type { RunLimits, SandboxExecutor, SandboxResult } from '../sandbox';
import type { PoolStats } from '../sandbox/warm-pool';
import { Admission, DeadlinePassedError, QueueFullError, type AdmissionTimers } from './admission';
import { LatencyWindow } from './latency';
import { RunCodeRefusal, RunCodeRequestSchema, runCodePlan, runCodeResponse, sandboxError } from './run-code';

export const MAX_COMPLETION_CHARS = 256 * 1024;
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

/** The records a server answers `/verify` for: dataset name -> record id (function id and idx) -> record. */
export class ServedDatasets {
  private readonly byName = new Map<string, Map<string, EvalRecord>>();

  add(name: string, records: readonly EvalRecord[]): void {
    if (!NAME.test(name)) throw new Error(`dataset name ${JSON.stringify(name.slice(0, 100))} is not allowed: [A-Za-z0-9_.-], at most 100 characters, not starting with . - or _`);
    if (this.byName.has(name)) throw new Error(`two datasets are named ${name}`);
    const ids = new Map<string, EvalRecord>();
    for (const r of records) {
      ids.set(r.functionId, r);
      if (!ids.has(r.idx)) ids.set(r.idx, r);
    }
    this.byName.set(name, ids);
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  size(name: string): number {
    return new Set(this.byName.get(name)?.values() ?? []).size;
  }

  find(name: string, id: string): EvalRecord | 'no-dataset' | 'no-record' {
    const ids = this.byName.get(name);
    if (!ids) return 'no-dataset';
    return ids.get(id) ?? 'no-record';
  }
}

const VerifyRequestSchema = z
  .object({
    dataset: z.string().max(100).optional(),
    id: z.union([z.string().max(200), z.number().int()]).transform(String).optional(),
    record: z.record(z.string(), z.unknown()).optional(),
    completion: z.string().max(MAX_COMPLETION_CHARS),
  })
  .strict()
  .refine((r) => (r.record !== undefined) !== (r.dataset !== undefined || r.id !== undefined), { message: 'give either {dataset, id} or {record}' })
  .refine((r) => r.record !== undefined || (r.dataset !== undefined && r.id !== undefined), { message: 'give both dataset and id' });

export interface VerifyResponse {
  reward: 0 | 1;
  passed: boolean;
  /** The failure kind, as eval.ts names it (null when passed). */
  kind: string | null;
  exceptionType: string | null;
  summary: string;
  /** One run of the script decides: its test functions, with the run's outcome and its seconds (0 when it never ran). */
  tests: { name: string; testFunctions: string[]; outcome: 'passed' | 'failed'; kind: string | null; duration: number }[];
  /** Seconds the run took in the sandbox (0 when the answer never ran). */
  duration: number;
  functionId: string;
}

export interface ServeOptions {
  executor: Pick<SandboxExecutor, 'run' | 'mode' | 'poolStats'>;
  /** Whether the container engine answers (a ping): on each tick, on /health and after a sandbox failure. */
  ping: () => Promise<boolean>;
  datasets: ServedDatasets;
  maxInFlight: number;
  maxQueued: number;
  maxBodyBytes: number;
  /** A run's own time limit (the sandbox kills it), the evaluation's default. */
  runTimeoutSec: number;
  /** A request's limit from its arrival to its answer: past it, waiting or running, it leaves the queue or its run is cancelled, and the answer is a 504. */
  requestTimeoutSec: number;
  limits: RunLimits;
  /** Bearer token every request but /health must carry (null: none). */
  token: string | null;
  /** How many times a run the sandbox itself failed is tried again before a 503. */
  infrastructureRetries?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** The requests' deadlines (real timers unless given). */
  timers?: AdmissionTimers;
  log?: (line: string) => void;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

class PoolDown extends Error {}
class TimedOut extends Error {}

const RETRY_AFTER_FULL_SEC = 1;
const RETRY_AFTER_DOWN_SEC = 5;

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

export class VerificationServer {
  readonly admission: Admission;
  readonly latency = new LatencyWindow();
  /** Answers by endpoint and HTTP status. */
  readonly answered = new Map<string, number>();
  private down = false;
  private probing: Promise<void> | null = null;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly tokenDigest: Buffer | null;
  private verdicts = { passed: 0, failed: 0 };

  constructor(private readonly options: ServeOptions) {
    this.admission = new Admission(options.maxInFlight, options.maxQueued, options.timers);
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.tokenDigest = options.token ? digest(options.token) : null;
  }

  get poolDown(): boolean {
    return this.down;
  }

  /** The request listener for `http.createServer`. */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    void this.handle(req, res);
  };

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = this.now();
    const route = (req.url ?? '/').split('?')[0]!;
    const endpoint = ['/run_code', '/verify', '/health', '/metrics'].includes(route) ? route : 'other';
    let status = 500;
    try {
      const answer = await this.route(req, route);
      status = answer.status;
      this.send(res, answer.status, answer.body, answer.contentType);
    } catch (err) {
      const e = err instanceof HttpError ? err : new HttpError(500, `internal error: ${(err as Error).message}`.slice(0, 300));
      if (!(err instanceof HttpError)) this.options.log?.(`serve: ${(err as Error).stack ?? String(err)}`);
      status = e.status;
      // A body still arriving (a refusal before it was read) is not read: the connection closes after the answer.
      if (!req.complete) res.setHeader('Connection', 'close');
      for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
      this.send(res, e.status, { error: e.message });
    } finally {
      const key = `${endpoint} ${status}`;
      this.answered.set(key, (this.answered.get(key) ?? 0) + 1);
      if ((endpoint === '/verify' || endpoint === '/run_code') && status === 200) this.latency.add(this.now() - started);
    }
  }

  private send(res: ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
    if (res.headersSent) return;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  }

  private async route(req: IncomingMessage, route: string): Promise<{ status: number; body: unknown; contentType?: string }> {
    if (route === '/health') {
      if (req.method !== 'GET') throw new HttpError(405, 'GET /health', { Allow: 'GET' });
      await this.probe();
      return this.down ? { status: 503, body: { status: 'down', reason: 'the container engine does not answer' } } : { status: 200, body: { status: 'ok', mode: this.options.executor.mode } };
    }
    this.authorize(req);
    if (route === '/metrics') {
      if (req.method !== 'GET') throw new HttpError(405, 'GET /metrics', { Allow: 'GET' });
      const prometheus = /[?&]format=prometheus\b/.test(req.url ?? '') || /\btext\/plain\b/.test(req.headers.accept ?? '');
      return prometheus ? { status: 200, body: this.prometheus(), contentType: 'text/plain; version=0.0.4' } : { status: 200, body: this.metrics() };
    }
    if (route !== '/run_code' && route !== '/verify') throw new HttpError(404, `no such endpoint: POST /run_code, POST /verify, GET /health, GET /metrics`);
    if (req.method !== 'POST') throw new HttpError(405, `POST ${route}`, { Allow: 'POST' });
    if (this.down) throw new HttpError(503, 'the sandbox is down (its container engine does not answer); try again later', { 'Retry-After': String(RETRY_AFTER_DOWN_SEC) });
    const body = await this.readJson(req);
    return route === '/run_code' ? this.runCode(body) : this.verify(body);
  }

  private authorize(req: IncomingMessage): void {
    if (!this.tokenDigest) return;
    const m = /^Bearer (\S{1,500})$/.exec(req.headers.authorization ?? '');
    if (!m || !timingSafeEqual(digest(m[1]!), this.tokenDigest)) throw new HttpError(401, 'a bearer token is required (Authorization: Bearer <token>)', { 'WWW-Authenticate': 'Bearer' });
  }

  private async readJson(req: IncomingMessage): Promise<unknown> {
    const limit = this.options.maxBodyBytes;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) throw new HttpError(413, `the request body is ${declared} bytes; at most ${limit}`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw new HttpError(413, `the request body is over ${limit} bytes`);
      chunks.push(chunk);
    }
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    } catch {
      throw new HttpError(400, 'the request body is not JSON');
    }
  }

  /**
   * Runs `task` through the admission with the request's time limit; a sandbox failure is tried
   * again (a killed container is replaced by the pool), and when the engine does not answer the
   * server is down until it does.
   */
  private async admitted<T>(task: (signal: AbortSignal) => Promise<{ value: T } | { infrastructure: SandboxResult }>): Promise<T> {
    try {
      return await this.admission.run(async (signal) => {
        const retries = this.options.infrastructureRetries ?? 2;
        for (let attempt = 0; ; attempt++) {
          if (signal.aborted) throw new TimedOut();
          if (this.down) throw new PoolDown();
          let out: { value: T } | { infrastructure: SandboxResult };
          try {
            out = await task(signal);
          } catch (err) {
            if (signal.aborted) throw new TimedOut();
            throw err;
          }
          if ('value' in out) return out.value;
          this.options.log?.(`serve: sandbox failure (attempt ${attempt + 1}): ${out.infrastructure.notes.join('; ').slice(0, 300)}`);
          if (!(await this.options.ping())) {
            this.markDown();
            throw new PoolDown();
          }
          if (attempt >= retries) throw new HttpError(503, `the sandbox failed ${attempt + 1} time(s) on this request: ${out.infrastructure.notes.join('; ').slice(0, 300)}`, { 'Retry-After': String(RETRY_AFTER_DOWN_SEC) });
          await this.sleep(250 * (attempt + 1));
        }
      }, this.options.requestTimeoutSec * 1000);
    } catch (err) {
      if (err instanceof QueueFullError) throw new HttpError(429, `busy: ${err.message}; try again shortly`, { 'Retry-After': String(RETRY_AFTER_FULL_SEC) });
      if (err instanceof PoolDown) throw new HttpError(503, 'the sandbox is down (its container engine does not answer); try again later', { 'Retry-After': String(RETRY_AFTER_DOWN_SEC) });
      if (err instanceof TimedOut || err instanceof DeadlinePassedError) throw new HttpError(504, `the request took longer than ${this.options.requestTimeoutSec} s (queue wait included)`);
      throw err;
    }
  }

  private markDown(): void {
    if (this.down) return;
    this.down = true;
    this.options.log?.('serve: the container engine does not answer; refusing runs (503) until it does');
  }

  /** One ping at a time: the server is down when the engine does not answer, and up again once it does. */
  private async probe(): Promise<void> {
    this.probing ??= this.options
      .ping()
      .then((ok) => {
        if (!ok) this.markDown();
        else if (this.down) {
          this.down = false;
          this.options.log?.('serve: the container engine answers again');
        }
      })
      .finally(() => {
        this.probing = null;
      });
    await this.probing;
  }

  /**
   * Called by the script every few seconds: the server finds out the engine went away before a
   * request fails on it, and that it is back without a request.
   */
  async tick(): Promise<void> {
    await this.probe();
  }

  private async runCode(body: unknown): Promise<{ status: number; body: unknown }> {
    const parsed = RunCodeRequestSchema.safeParse(body);
    if (!parsed.success) throw new HttpError(400, `not a run_code request: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`.slice(0, 500));
    let plan;
    try {
      plan = runCodePlan(parsed.data, { timeoutSec: this.options.runTimeoutSec, memoryMb: this.options.limits.memoryMb });
    } catch (err) {
      if (err instanceof RunCodeRefusal) return { status: 200, body: sandboxError(err.message) };
      throw err;
    }
    const limits = plan.memoryMb ? { ...this.options.limits, memoryMb: plan.memoryMb } : this.options.limits;
    const result = await this.admitted<SandboxResult>(async (signal) => {
      const r = await this.options.executor.run({ script: plan.script, files: plan.files, timeoutSec: plan.timeoutSec, limits }, { signal });
      return r.status === 'infrastructure' ? { infrastructure: r } : { value: r };
    });
    return { status: 200, body: runCodeResponse(result, plan.fetch) };
  }

  private async verify(body: unknown): Promise<{ status: number; body: VerifyResponse }> {
    const parsed = VerifyRequestSchema.safeParse(body);
    if (!parsed.success) throw new HttpError(400, `not a verify request: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ')}`.slice(0, 500));
    const request = parsed.data;
    let record: EvalRecord;
    if (request.record) {
      const line = EvalDatasetLineSchema.safeParse(request.record);
      if (!line.success) throw new HttpError(400, `record: not an evaluation record: ${line.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`.slice(0, 500));
      record = toEvalRecord(line.data);
    } else {
      const found = this.options.datasets.find(request.dataset!, request.id!);
      if (found === 'no-dataset') throw new HttpError(404, `no dataset named ${JSON.stringify(request.dataset!.slice(0, 100))}; this server has: ${this.options.datasets.names.join(', ') || '(none)'}`);
      if (found === 'no-record') throw new HttpError(404, `dataset ${request.dataset} has no record ${JSON.stringify(request.id!.slice(0, 200))} (a function_id or an idx)`);
      record = found;
    }
    const verdict = await this.admitted<Extract<Awaited<ReturnType<typeof verifyAnswer>>, { outcome: unknown }>>(async (signal) => {
      const v = await verifyAnswer(this.options.executor, record, request.completion, { timeoutSec: this.options.runTimeoutSec, limits: this.options.limits }, { signal });
      return 'infrastructure' in v ? v : { value: v };
    });
    const { outcome, result } = verdict;
    this.verdicts[outcome.passed ? 'passed' : 'failed'] += 1;
    const duration = (result?.durationMs ?? 0) / 1000;
    const tests = [{ name: 'eval_script', testFunctions: testFunctionNames(record.evalScript).slice(0, 100), outcome: outcome.passed ? ('passed' as const) : ('failed' as const), kind: outcome.kind, duration }];
    return {
      status: 200,
      body: { reward: outcome.passed ? 1 : 0, passed: outcome.passed, kind: outcome.kind, exceptionType: outcome.exceptionType, summary: outcome.summary, tests, duration, functionId: record.functionId },
    };
  }

  metrics(): Record<string, unknown> {
    const requests: Record<string, Record<string, number>> = {};
    for (const [key, n] of this.answered) {
      const [endpoint, status] = key.split(' ') as [string, string];
      (requests[endpoint] ??= {})[status] = n;
    }
    const pool: PoolStats | null = this.options.executor.poolStats;
    return {
      requests,
      verdicts: { ...this.verdicts },
      queue: { depth: this.admission.queued, max: this.admission.maxQueued },
      inFlight: { now: this.admission.inFlight, max: this.admission.maxInFlight },
      latencyMs: { ...this.latency.percentiles([50, 90, 99]), samples: this.latency.count },
      pool: { state: this.down ? 'down' : 'up', mode: this.options.executor.mode, containersCreated: pool?.created ?? null, containersRecycled: pool?.recycled ?? null },
    };
  }

  /** The same figures in Prometheus's text format. */
  prometheus(): string {
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string, samples: [string, number | null][]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, v] of samples) if (v !== null) lines.push(`${name}${labels} ${v}`);
    };
    metric('repost_serve_requests_total', 'counter', 'Answered requests by endpoint and HTTP status.', [...this.answered].map(([key, n]) => {
      const [endpoint, status] = key.split(' ');
      return [`{endpoint="${endpoint}",status="${status}"}`, n];
    }));
    metric('repost_serve_verdicts_total', 'counter', 'Verdicts of /verify by outcome.', [['{outcome="passed"}', this.verdicts.passed], ['{outcome="failed"}', this.verdicts.failed]]);
    metric('repost_serve_queue_depth', 'gauge', 'Requests waiting for a run slot.', [['', this.admission.queued]]);
    metric('repost_serve_in_flight', 'gauge', 'Runs in progress.', [['', this.admission.inFlight]]);
    const p = this.latency.percentiles([50, 90, 99]);
    metric('repost_serve_latency_ms', 'gauge', 'Latency percentiles of answered runs (recent window).', [['{quantile="0.5"}', p.p50 ?? null], ['{quantile="0.9"}', p.p90 ?? null], ['{quantile="0.99"}', p.p99 ?? null]]);
    const pool = this.options.executor.poolStats;
    metric('repost_serve_pool_up', 'gauge', '1 when the container engine answers.', [['', this.down ? 0 : 1]]);
    metric('repost_serve_pool_containers_created_total', 'counter', 'Sandbox containers the pool started.', [['', pool?.created ?? null]]);
    metric('repost_serve_pool_containers_recycled_total', 'counter', 'Sandbox containers the pool threw away.', [['', pool?.recycled ?? null]]);
    return `${lines.join('\n')}\n`;
  }
}
