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
  const e = err as { response?: { headers?: Record<string, unknown>; data?: { message?: unknown } } };
  if (e.response?.headers?.[REFUSED_HEADER]) return new DownloadRefused(String(e.response.data?.message ?? 'refused'));
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

/** Reads a response body whole, refusing one over `maxBytes` (by its length header, or as it arrives). */
export async function readCapped(body: unknown, maxBytes: number, what: string): Promise<Buffer> {
  if (body instanceof ArrayBuffer) return capped(Buffer.from(body), maxBytes, what);
  if (Buffer.isBuffer(body)) return capped(body, maxBytes, what);
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
      throw new DownloadRefused(`larger than ${maxBytes} bytes: refused`);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks, total);
}

function capped(data: Buffer, maxBytes: number, what: string): Buffer {
  if (data.length > maxBytes) throw new DownloadRefused(`${data.length} bytes, larger than ${maxBytes} bytes (${what}): refused`);
  return data;
}
