/**
 * The rules every request to a source host follows (the GitHub API and the archives it redirects
 * to): https only, redirects followed here one hop at a time and each checked (never to plain
 * http, at most five), the token sent to the configured host only, a size cap on a body read
 * whole, and one deadline over a download's every attempt, redirect and byte.
 *
 * Plain http is accepted only from the configured host itself when that host is on the loopback
 * interface (a local stand-in for GitHub, as in the tests); never after a redirect to elsewhere.
 */

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

export class DownloadRefused extends Error {
  override name = 'DownloadRefused';
}

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** Whether a request may go to `url`, given the configured base URL. */
export function urlProblem(url: URL, base: URL): string | null {
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && base.protocol === 'http:' && url.origin === base.origin && isLoopback(base.hostname)) return null;
  return `refused ${url.protocol.replace(/:$/, '')} URL ${url.origin}: source downloads use https only`;
}

/** Checks the configured base URL itself: https, or http on the loopback interface. */
export function checkBaseUrl(baseURL: string): URL {
  const base = new URL(baseURL);
  const problem = urlProblem(base, base);
  if (problem) throw new DownloadRefused(`github.baseUrl ${base.origin}: ${problem}`);
  return base;
}

/** Marks the answer `guardedFetch` gives for a refused request. */
export const REFUSED_HEADER = 'x-repost-refused';

/**
 * A `fetch` for the GitHub client: the same call, with redirects followed by hand under the rules
 * above; the Authorization header goes only to the base URL's origin. A refused request is
 * answered with a 400 marked `x-repost-refused` and the reason as its message, so the client's
 * retry plugin does not retry it (a refusal is final) and the caller can tell it apart.
 */
export function guardedFetch(baseURL: string, inner: typeof fetch = fetch): typeof fetch {
  const base = checkBaseUrl(baseURL);
  return async (input, init) => {
    try {
      return await follow(base, inner, input, init);
    } catch (err) {
      if (!(err instanceof DownloadRefused)) throw err;
      return new Response(JSON.stringify({ message: err.message }), { status: 400, headers: { 'content-type': 'application/json', [REFUSED_HEADER]: '1' } });
    }
  };
}

/** The refusal behind a client error, if it is one. */
export function refusalOf(err: unknown): DownloadRefused | null {
  if (err instanceof DownloadRefused) return err;
  const e = err as { response?: { headers?: Record<string, unknown>; data?: { message?: unknown } } } | null | undefined;
  if (e?.response?.headers?.[REFUSED_HEADER]) return new DownloadRefused(String(e.response.data?.message ?? 'refused'));
  return null;
}

async function follow(base: URL, inner: typeof fetch, input: Parameters<typeof fetch>[0], init: Parameters<typeof fetch>[1]): Promise<Response> {
  {
    let url = new URL(input instanceof Request ? input.url : String(input));
    let options: RequestInit = { ...init, redirect: 'manual' };
    for (let hop = 0; ; hop++) {
      const problem = urlProblem(url, base);
      if (problem) throw new DownloadRefused(problem);
      const res = await inner(url, options);
      const location = res.headers.get('location');
      if (!REDIRECTS.has(res.status) || !location) return res;
      if (hop >= MAX_REDIRECTS) throw new DownloadRefused(`more than ${MAX_REDIRECTS} redirects from ${base.origin}`);
      await res.body?.cancel().catch(() => undefined);
      const next = new URL(location, url);
      if (next.origin !== base.origin) {
        // The token is for the API host only.
        const headers = new Headers(options.headers);
        headers.delete('authorization');
        options = { ...options, headers };
      }
      if (res.status === 303) options = { ...options, method: 'GET', body: undefined };
      url = next;
    }
  }
}

/**
 * Reads a response body whole, refusing one over `maxBytes` (by its length header, or as it
 * arrives); `limitName` names the setting the cap comes from in the refusal.
 */
export async function readCapped(body: unknown, maxBytes: number, what: string, limitName?: string): Promise<Buffer> {
  const limit = limitName ? ` (${limitName})` : '';
  if (body instanceof ArrayBuffer) return capped(Buffer.from(body), maxBytes, what, limit);
  if (Buffer.isBuffer(body)) return capped(body, maxBytes, what, limit);
  if (!body || typeof (body as ReadableStream).getReader !== 'function') throw new Error(`unexpected ${what} body: ${typeof body}`);
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new DownloadRefused(`larger than ${maxBytes} bytes${limit}: refused`);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks, total);
}

function capped(data: Buffer, maxBytes: number, what: string, limit: string): Buffer {
  if (data.length > maxBytes) throw new DownloadRefused(`${data.length} bytes, larger than ${maxBytes} bytes${limit} (${what}): refused`);
  return data;
}

/** Time as a download sees it: now, and a wait a signal can end early. Injected in tests. */
export interface DownloadClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const SYSTEM_CLOCK: DownloadClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/** Statuses never retried: a client error is the same the next time (GitHub's 403s that are rate limits are the throttling's). */
export const DO_NOT_RETRY: readonly number[] = [400, 401, 403, 404, 410, 422, 451];

const seconds = (ms: number) => Number((ms / 1000).toFixed(3));

/** One download's deadline, over every attempt, every wait between attempts, every redirect and byte. */
export class DownloadDeadline {
  readonly at: number;
  /** Set once a wait was refused for ending past the deadline: the download's final answer. */
  refused: DownloadRefused | null = null;

  constructor(
    readonly ms: number,
    private readonly clock: DownloadClock = SYSTEM_CLOCK,
  ) {
    this.at = clock.now() + ms;
  }

  /** Whether a wait of `waitMs` from now still ends before the deadline (else waiting is pointless). */
  allowsWait(waitMs: number): boolean {
    return this.clock.now() + waitMs < this.at;
  }

  /** Records that a wait of `waitMs` (after `after`) was not taken because it ends past the deadline. */
  refuseWait(waitMs: number, after: string): DownloadRefused {
    this.refused ??= this.refusal(`${after}; a retry in ${seconds(waitMs)} s would start past it`);
    return this.refused;
  }

  refusal(detail?: string): DownloadRefused {
    return new DownloadRefused(`not downloaded within ${seconds(this.ms)} s (crawl.github.downloadTimeoutSec): refused${detail ? ` (${detail})` : ''}`);
  }
}

/** Network failures worth another attempt (a reset or refused connection, a socket closed mid-body). */
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * A failure worth another attempt: a server error, a 429, a network failure (the client reports
 * one as a 500, or it surfaces while the body is read); never a refusal, an abort or a client error.
 */
export function isTransientFailure(err: unknown): boolean {
  if (err instanceof DownloadRefused || refusalOf(err)) return false;
  const e = err as { status?: unknown; name?: unknown; code?: unknown; cause?: { code?: unknown } } | null;
  if (!e || typeof e !== 'object' || e.name === 'AbortError' || e.name === 'TimeoutError') return false;
  if (typeof e.status === 'number') return e.status >= 400 && !DO_NOT_RETRY.includes(e.status);
  return NETWORK_CODES.has(String(e.code)) || NETWORK_CODES.has(String(e.cause?.code));
}

/** A failure in a few words, for a refusal's reason. */
export function failureSummary(err: unknown): string {
  const e = err as { status?: unknown; message?: unknown } | null;
  if (typeof e?.status === 'number') return `HTTP ${e.status}`;
  return String(e?.message ?? err);
}

export interface RetryOptions {
  /** Attempts after the first. */
  retries: number;
  /** The wait before attempt n+1 is (n+1)² units (1, 4, 9, ...), as Octokit's retry plugin waits. */
  unitMs: number;
  deadline: DownloadDeadline;
  clock?: DownloadClock;
  /** Aborted at the deadline (or when the work is cancelled): ends a wait early, and the download with it. */
  signal?: AbortSignal;
  isTransient?: (err: unknown) => boolean;
  onRetry?: (attempt: number, waitMs: number, err: unknown) => void;
}

/**
 * Runs `attempt` until it succeeds, fails for good, or has no retry left. Only transient failures
 * are retried. A retry whose wait would end at or past the deadline is not waited for: the
 * download is refused at once with the deadline's reason, so the deadline covers the waits as well
 * as the attempts; a failure after the deadline passed is the deadline's refusal too.
 */
export async function withRetries<T>(attempt: (n: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const clock = options.clock ?? SYSTEM_CLOCK;
  const transient = options.isTransient ?? isTransientFailure;
  const { deadline, signal } = options;
  for (let n = 0; ; n++) {
    if (signal?.aborted) throw deadline.refused ?? deadline.refusal();
    try {
      return await attempt(n);
    } catch (err) {
      if (deadline.refused) throw deadline.refused;
      if (signal?.aborted) throw deadline.refusal();
      if (n >= options.retries || !transient(err)) throw err;
      const waitMs = (n + 1) ** 2 * options.unitMs;
      if (!deadline.allowsWait(waitMs)) throw deadline.refuseWait(waitMs, failureSummary(err));
      options.onRetry?.(n + 1, waitMs, err);
      try {
        await clock.sleep(waitMs, signal);
      } catch {
        throw deadline.refusal();
      }
    }
  }
}

/**
 * Whether the throttling should retry a rate-limited request after `retryAfterMs`: within the
 * retries, and, for a download with a deadline, only if the wait ends before it (else the
 * deadline records the refusal, which becomes the download's answer).
 */
export function rateLimitRetryAllowed(retryCount: number, retries: number, retryAfterMs: number, deadline?: DownloadDeadline): boolean {
  if (retryCount >= retries) return false;
  if (deadline === undefined || deadline.allowsWait(retryAfterMs)) return true;
  deadline.refuseWait(retryAfterMs, 'rate limited');
  return false;
}

/**
 * `work`, or the deadline's refusal as soon as `signal` aborts, whichever comes first: whatever a
 * client library does inside (a queue, a wait of its own), the caller has its answer at the
 * deadline. The abandoned work's requests carry the same signal and end with it.
 */
export function withinDeadline<T>(work: Promise<T>, signal: AbortSignal, deadline: DownloadDeadline): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => undefined);
      reject(deadline.refused ?? deadline.refusal());
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
