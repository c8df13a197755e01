/**
 * GitHub as a source, through @octokit/rest with the throttling and retry plugins: the RepoST
 * crawl (search with its filters, past the search API's 1,000-result cap by slicing the creation
 * window), a seeded sample, pinning each repository to a commit, and tarball download into a
 * snapshot. The base URL is configurable so tests run against a local server. Every request goes
 * through `download.ts`'s rules: https only (redirects checked hop by hop, never to plain http),
 * and a tarball within a size cap and one deadline over its retries, redirects and bytes: a
 * tarball is retried by `withRetries` (server errors and network failures only, never a wait that
 * ends past the deadline), not by the retry plugin, and the throttling waits out a rate limit for
 * it only when the wait ends before the deadline.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  DO_NOT_RETRY,
  DownloadDeadline,
  DownloadRefused,
  SYSTEM_CLOCK,
  guardedFetch,
  rateLimitRetryAllowed,
  readCapped,
  refusalOf,
  withRetries,
  withinDeadline,
  type DownloadClock,
} from './download';
import { DEFAULT_LIMITS, SnapshotStore, type SnapshotLimits } from './snapshot';
import { CrawlFiltersSchema, type CrawlFilters, type RepoRef, type SnapshotResult, type SourceSkip } from './types';

export interface GitHubSourceOptions {
  baseURL: string;
  token?: string;
  /** The search API returns at most this many results per query (GitHub: 1,000). */
  searchResultCap?: number;
  perPage?: number;
  /** Retries of transient failures (5xx, network) and of rate-limited requests. */
  retries?: number;
  /** Spacing of search requests (GitHub allows 30 a minute with a token). */
  searchIntervalMs?: number;
  /** Unit of a `retry-after` header; lowered in tests. */
  retryAfterUnitMs?: number;
  /** Unit of the waits between retries of a failed request (1, 4, 9, ... units; default 1,000 ms). */
  retryUnitMs?: number;
  /** The clock of a download's deadline and of its waits between retries (tests inject one). */
  clock?: DownloadClock;
  /** Where rate-limit waits and truncated searches are reported. */
  log?: (message: string) => void;
  /** Largest tarball downloaded (bytes); a larger one is refused as it arrives (`crawl.github.maxTarballMb`). */
  maxTarballBytes: number;
  /** Deadline of one tarball download: every retry, redirect and byte (ms; `crawl.github.downloadTimeoutSec`). */
  tarballDeadlineMs: number;
}

/** The subset of GitHub's repository object the crawl reads (validated: data enters here). */
const RepoSchema = z.object({
  full_name: z.string(),
  name: z.string(),
  owner: z.object({ login: z.string() }),
  fork: z.boolean().default(false),
  archived: z.boolean().default(false),
  size: z.number().default(0),
  created_at: z.string().nullable().default(null),
  stargazers_count: z.number().default(0),
  default_branch: z.string().default('main'),
  license: z.object({ key: z.string().nullable().optional(), spdx_id: z.string().nullable().optional() }).nullable().default(null),
});
type RepoJson = z.infer<typeof RepoSchema>;

const SearchPageSchema = z.object({ total_count: z.number(), incomplete_results: z.boolean().default(false), items: z.array(RepoSchema) });
/** A commit as the branch and commit endpoints give it: its SHA and dates (the committer's is when it entered the branch). */
const CommitSchema = z.object({
  sha: z.string().regex(/^[0-9a-f]{40}$/),
  commit: z
    .object({
      committer: z.object({ date: z.string().nullable().optional() }).nullable().optional(),
      author: z.object({ date: z.string().nullable().optional() }).nullable().optional(),
    })
    .optional(),
});
const BranchSchema = z.object({ commit: CommitSchema });

/** The commit's date (ISO 8601), or null when GitHub gives none that parses. */
function commitDateOf(commit: z.infer<typeof CommitSchema>): string | null {
  const date = commit.commit?.committer?.date ?? commit.commit?.author?.date ?? null;
  return date && Number.isFinite(Date.parse(date)) ? new Date(Date.parse(date)).toISOString() : null;
}

function toRef(r: RepoJson): RepoRef {
  return {
    id: r.full_name,
    owner: r.owner.login,
    name: r.name,
    commit: null,
    createdAt: r.created_at,
    license: r.license?.key ?? null,
    stars: r.stargazers_count,
    sizeKb: r.size,
    defaultBranch: r.default_branch,
  };
}

const DAY = 24 * 3600 * 1000;
const toDate = (s: string) => Date.parse(`${s}T00:00:00Z`);
const fmtDate = (t: number) => new Date(t).toISOString().slice(0, 10);

/** Deterministic order for sampling: a seeded hash of each repository id. */
export function seededSample<T extends { id: string }>(items: T[], limit: number, seed: number): T[] {
  const rank = (x: T) => createHash('sha256').update(`${seed}:${x.id.toLowerCase()}`).digest('hex');
  return items
    .map((x) => ({ x, r: rank(x) }))
    .sort((a, b) => (a.r < b.r ? -1 : a.r > b.r ? 1 : 0))
    .slice(0, limit)
    .map((e) => e.x);
}

export function searchQuery(filters: CrawlFilters, license: string, from: string, to: string): string {
  const q = [`language:${filters.language}`, `license:${license}`, `created:${from}..${to}`, `size:<=${filters.maxSizeKb}`];
  if (!filters.includeForks) q.push('fork:false');
  if (!filters.includeArchived) q.push('archived:false');
  if (filters.minStars > 0) q.push(`stars:>=${filters.minStars}`);
  return q.join(' ');
}

type OctokitLike = {
  request: (route: string, params?: Record<string, unknown>) => Promise<{ status: number; data: unknown; headers: Record<string, unknown> }>;
};

export class GitHubSource {
  private readonly octokit: OctokitLike;
  private readonly cap: number;
  private readonly perPage: number;
  private readonly log: (message: string) => void;
  /** Requests sent, for reports and tests. */
  requests = 0;

  constructor(readonly options: GitHubSourceOptions) {
    this.cap = options.searchResultCap ?? 1000;
    this.perPage = Math.min(options.perPage ?? 100, 100);
    this.log = options.log ?? (() => undefined);
    // Loaded on use: the Octokit packages are ES modules, required only where GitHub is used.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Octokit } = require('@octokit/rest') as typeof import('@octokit/rest');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { throttling } = require('@octokit/plugin-throttling') as typeof import('@octokit/plugin-throttling');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { retry } = require('@octokit/plugin-retry') as typeof import('@octokit/plugin-retry');
    const retries = options.retries ?? 3;
    const retryAfterUnitMs = options.retryAfterUnitMs ?? 1000;
    // A download's requests carry its deadline: a rate-limit wait ending past it is not taken.
    type Limited = { method: string; url: string; request?: { downloadDeadline?: DownloadDeadline } };
    const onLimit = (what: string) => (retryAfter: number, o: Limited, _k: unknown, retryCount: number) => {
      const retry = rateLimitRetryAllowed(retryCount, retries, retryAfter * retryAfterUnitMs, o.request?.downloadDeadline);
      this.log(`${what} on ${o.method} ${o.url}; ${retry ? `retry ${retryCount + 1} after ${retryAfter}s` : 'not retried'}`);
      return retry;
    };
    const throttle: Record<string, unknown> = {
      onRateLimit: onLimit('rate limited'),
      onSecondaryRateLimit: onLimit('secondary rate limit'),
      retryAfterBaseValue: retryAfterUnitMs,
    };
    if (options.searchIntervalMs !== undefined) {
      // bottleneck is the throttling plugin's own scheduler; only its search spacing is changed.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const Bottleneck = require('bottleneck') as { Group: new (o: Record<string, unknown>) => unknown };
      throttle.search = new Bottleneck.Group({ maxConcurrent: 1, minTime: options.searchIntervalMs });
    }
    const Client = Octokit.plugin(throttling, retry);
    const client = new Client({
      baseUrl: options.baseURL.replace(/\/$/, ''),
      // https only, redirects checked hop by hop, the token for the API host only.
      request: { fetch: guardedFetch(options.baseURL) },
      auth: options.token,
      userAgent: 'repost-factory',
      throttle: throttle as never,
      retry: { retries, doNotRetry: [...DO_NOT_RETRY], retryAfterBaseValue: options.retryUnitMs ?? 1000 },
      log: { debug: () => undefined, info: () => undefined, warn: (m: string) => this.log(m), error: (m: string) => this.log(m) },
    });
    this.octokit = {
      request: async (route, params) => {
        this.requests++;
        return (await client.request(route, params)) as { status: number; data: unknown; headers: Record<string, unknown> };
      },
    };
  }

  private async searchPage(q: string, page: number) {
    const res = await this.octokit.request('GET /search/repositories', { q, sort: 'stars', order: 'desc', per_page: this.perPage, page });
    return SearchPageSchema.parse(res.data);
  }

  /** All results of one query within the cap. */
  private async searchAll(q: string, first: z.infer<typeof SearchPageSchema>): Promise<RepoJson[]> {
    const items = [...first.items];
    const reachable = Math.min(first.total_count, this.cap);
    for (let page = 2; items.length < reachable && (page - 1) * this.perPage < this.cap; page++) {
      const next = await this.searchPage(q, page);
      if (next.items.length === 0) break;
      items.push(...next.items);
    }
    return items;
  }

  /**
   * Every repository matching the filters: a window whose result count exceeds the cap is cut in
   * two by creation date until each part fits (down to one day).
   */
  async searchAllWindows(filtersInput: z.input<typeof CrawlFiltersSchema>): Promise<{ repos: RepoRef[]; windows: number; truncatedWindows: string[] }> {
    const filters = CrawlFiltersSchema.parse(filtersInput);
    const found = new Map<string, RepoRef>();
    const truncated: string[] = [];
    let windows = 0;
    for (const license of filters.licenses) {
      const stack: [number, number][] = [[toDate(filters.createdFrom), toDate(filters.createdTo)]];
      while (stack.length) {
        const [from, to] = stack.pop()!;
        const q = searchQuery(filters, license, fmtDate(from), fmtDate(to));
        const first = await this.searchPage(q, 1);
        windows++;
        if (first.incomplete_results) this.log(`search timed out on GitHub's side, results may be incomplete: ${q}`);
        if (first.total_count > this.cap && to > from) {
          const mid = from + Math.floor((to - from) / DAY / 2) * DAY;
          // Later half pushed first so that the earlier half is searched first.
          stack.push([mid + DAY, to], [from, mid]);
          continue;
        }
        if (first.total_count > this.cap) truncated.push(q);
        for (const item of await this.searchAll(q, first)) {
          // The server's filters are trusted but checked: a fork or a wrong license never slips in.
          if (!filters.includeForks && item.fork) continue;
          if (!filters.includeArchived && item.archived) continue;
          if (!found.has(item.full_name.toLowerCase())) found.set(item.full_name.toLowerCase(), toRef(item));
        }
      }
    }
    for (const q of truncated) this.log(`more than ${this.cap} results even for one day: ${q}`);
    const repos = [...found.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
    return { repos, windows, truncatedWindows: truncated };
  }

  /** The crawl: search, then a seeded sample of `limit` repositories. */
  async search(filters: z.input<typeof CrawlFiltersSchema>, sample: { limit: number; seed: number }) {
    const all = await this.searchAllWindows(filters);
    return { ...all, total: all.repos.length, repos: seededSample(all.repos, sample.limit, sample.seed) };
  }

  /**
   * Fills in metadata and pins the default branch's head commit (or keeps a listed commit), with
   * the commit's date: the sandbox resolves the repository's packages as of it.
   */
  async pin(ref: RepoRef): Promise<{ ok: true; ref: RepoRef } | { ok: false; skip: SourceSkip }> {
    const [owner, repo] = ref.id.split('/');
    let meta: RepoJson;
    try {
      meta = RepoSchema.parse((await this.octokit.request('GET /repos/{owner}/{repo}', { owner, repo })).data);
    } catch (err) {
      return { ok: false, skip: { repoId: ref.id, stage: 'resolve', reason: describe(err, 'repository') } };
    }
    const full = { ...toRef(meta), commit: ref.commit };
    if (full.commit) {
      try {
        const commit = CommitSchema.parse((await this.octokit.request('GET /repos/{owner}/{repo}/commits/{ref}', { owner, repo, ref: full.commit })).data);
        return { ok: true, ref: { ...full, commitDate: commitDateOf(commit) } };
      } catch (err) {
        return { ok: false, skip: { repoId: ref.id, stage: 'resolve', reason: describe(err, `commit ${full.commit}`) } };
      }
    }
    try {
      const branch = BranchSchema.parse(
        (await this.octokit.request('GET /repos/{owner}/{repo}/branches/{branch}', { owner, repo, branch: meta.default_branch })).data,
      );
      return { ok: true, ref: { ...full, commit: branch.commit.sha, commitDate: commitDateOf(branch.commit) } };
    } catch (err) {
      return { ok: false, skip: { repoId: ref.id, stage: 'resolve', reason: describe(err, `branch ${meta.default_branch}`) } };
    }
  }

  /**
   * The commit's tarball, within the size cap and one deadline over every attempt, wait, redirect
   * and byte. Server errors and network failures are retried (each attempt reads the whole body);
   * client errors and refusals are not; no wait is begun that would end past the deadline.
   */
  async tarball(ref: RepoRef): Promise<Buffer> {
    const [owner, repo] = ref.id.split('/');
    const maxBytes = this.options.maxTarballBytes;
    const clock = this.options.clock ?? SYSTEM_CLOCK;
    const deadline = new DownloadDeadline(this.options.tarballDeadlineMs, clock);
    const signal = AbortSignal.timeout(this.options.tarballDeadlineMs);
    const attempt = async (): Promise<Buffer> => {
      // retries: 0 turns the retry plugin off for this request: the loop below retries it.
      const request = { parseSuccessResponseBody: false, signal, retries: 0, downloadDeadline: deadline };
      const res = await this.octokit.request('GET /repos/{owner}/{repo}/tarball/{ref}', { owner, repo, ref: ref.commit, request });
      const length = Number(res.headers['content-length']);
      if (Number.isFinite(length) && length > maxBytes) {
        await (res.data as ReadableStream | null)?.cancel?.().catch(() => undefined);
        throw new DownloadRefused(`${length} bytes, larger than ${maxBytes} bytes (crawl.github.maxTarballMb): refused`);
      }
      return await readCapped(res.data, maxBytes, 'tarball', 'crawl.github.maxTarballMb');
    };
    try {
      const retries = this.options.retries ?? 3;
      const unitMs = this.options.retryUnitMs ?? 1000;
      const onRetry = (n: number, waitMs: number, err: unknown) => this.log(`tarball of ${ref.id} failed (${describe(err, 'tarball')}); retry ${n} in ${waitMs} ms`);
      return await withinDeadline(withRetries(attempt, { retries, unitMs, deadline, clock, signal, onRetry }), signal, deadline);
    } catch (err) {
      if (deadline.refused) throw deadline.refused;
      if (signal.aborted) throw deadline.refusal();
      throw refusalOf(err) ?? err;
    }
  }

  /**
   * Pin, check the size, download and extract: a snapshot, or a skip with the stage and reason.
   * An existing snapshot of the pinned commit is reused without downloading.
   */
  async snapshot(input: RepoRef, store: SnapshotStore, opts: { maxSizeKb?: number; limits?: SnapshotLimits } = {}): Promise<SnapshotResult> {
    const pinned = input.commit && input.createdAt !== null && input.commitDate !== undefined ? { ok: true as const, ref: input } : await this.pin(input);
    if (!pinned.ok) return pinned;
    const ref = pinned.ref;
    const commit = ref.commit!;
    if (opts.maxSizeKb !== undefined && ref.sizeKb !== null && ref.sizeKb > opts.maxSizeKb) {
      return { ok: false, skip: { repoId: ref.id, stage: 'fetch', reason: `repository too large (${ref.sizeKb} KB > ${opts.maxSizeKb} KB)` } };
    }
    const existing = await store.existing(ref.id, commit);
    if (existing) return { ok: true, snapshot: existing, ref };
    let tarball: Buffer;
    try {
      tarball = await this.tarball(ref);
    } catch (err) {
      return { ok: false, skip: { repoId: ref.id, stage: 'fetch', reason: describe(err, 'tarball') } };
    }
    const extracted = await store.fromTarball(ref.id, commit, tarball, opts.limits ?? { ...DEFAULT_LIMITS, maxTarballBytes: this.options.maxTarballBytes });
    if (!extracted.ok) return { ok: false, skip: { repoId: ref.id, stage: 'extract', reason: extracted.reason } };
    return { ok: true, snapshot: extracted.snapshot, ref };
  }
}

function describe(err: unknown, what: string): string {
  const e = err as { status?: number; message?: string };
  if (e.status === 404) return `${what} not found (404)`;
  if (e.status === 451) return `${what} unavailable for legal reasons (451)`;
  if (e.status) return `${what}: HTTP ${e.status} ${e.message ?? ''}`.trim();
  return `${what}: ${e.message ?? String(err)}`;
}
