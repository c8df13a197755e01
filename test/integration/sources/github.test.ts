/**
 * The GitHub source against a local server serving recorded GitHub responses and tarballs
 * generated here from the fixture repositories.
 */
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { analyzeRepository } from '../../../activities/analysis';
import type { RepoRef, SnapshotResult } from '../../../activities/sources';
import { startFakeGitHub, type FakeGitHub, type RecordedRepo } from '../../fixtures/github/server';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');
const DRIVER = path.join(__dirname, 'github-driver.ts');
const REPOS = path.join(ROOT, 'test/fixtures/repos');

jest.setTimeout(60_000);

async function drive<T>(cmd: Record<string, unknown>): Promise<T> {
  const { stdout } = await run(process.execPath, ['-r', 'tsx/cjs', DRIVER, JSON.stringify(cmd)], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout) as T;
}

/** A GitHub-style tarball: one top-level folder `owner-name-sha7/` holding the tree. */
function tarballOf(dir: string, top: string): Buffer {
  return execFileSync('tar', ['-czf', '-', '-C', path.dirname(dir), `--transform=s,^${path.basename(dir)},${top},`, path.basename(dir)]);
}

function ref(id: string, commit: string | null = null): RepoRef {
  const [owner, name] = id.split('/');
  return { id, owner: owner!, name: name!, commit, createdAt: null, license: null, stars: null, sizeKb: null, defaultBranch: null };
}

/** What the default RepoST filters must select from the recording, computed independently. */
function expectedDefaultSelection(repos: RecordedRepo[]): string[] {
  return repos
    .filter((r) => !r.fork && !r.archived && r.license?.key === 'mit' && r.size <= 10 * 1024)
    .filter((r) => r.created_at.slice(0, 10) >= '2023-01-31' && r.created_at.slice(0, 10) <= '2024-08-31')
    .map((r) => r.full_name)
    .sort();
}

describe('GitHub source', () => {
  let gh: FakeGitHub;
  let dataDir: string;

  beforeAll(async () => {
    gh = await startFakeGitHub({ searchCap: 3 });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'snapshots-'));
    for (const r of gh.repos) {
      const fixture = r._recorded.tarball_fixture;
      if (fixture) gh.tarballs.set(r.full_name, tarballOf(path.join(REPOS, fixture), `${r.owner.login}-${r.name}-${r._recorded.head_sha.slice(0, 7)}`));
    }
    // A repository with no Python at all: only an image and a data file.
    const binDir = fs.mkdtempSync(path.join(os.tmpdir(), 'only-images-'));
    fs.writeFileSync(path.join(binDir, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]));
    fs.writeFileSync(path.join(binDir, 'data.bin'), Buffer.alloc(64, 7));
    gh.tarballs.set('pics/only-images', tarballOf(binDir, 'pics-only-images-0000000'));
  });

  afterAll(async () => {
    await gh.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('finds every repository matching the filters past the result cap by slicing the creation window', async () => {
    const out = await drive<{ repos: RepoRef[]; windows: number; total: number; truncatedWindows: string[] }>({
      baseURL: gh.baseURL, dataDir, op: 'search', cap: 3, perPage: 2, sample: { limit: 100, seed: 0 },
    });
    const expected = expectedDefaultSelection(gh.repos);
    expect(expected.length).toBeGreaterThan(3); // more than one query can return
    expect(out.repos.map((r) => r.id).sort()).toEqual(expected);
    expect(out.windows).toBeGreaterThan(1);
    expect(out.truncatedWindows).toEqual([]);
    const searches = gh.log.filter((l) => l.startsWith('GET /search/repositories'));
    for (const s of searches) {
      const q = new URL(s.slice(4), 'http://x').searchParams.get('q')!;
      expect(q).toContain('license:mit');
      expect(q).toContain('fork:false');
      expect(q).toMatch(/created:\d{4}-\d{2}-\d{2}\.\.\d{4}-\d{2}-\d{2}/);
    }
    const acme = out.repos.find((r) => r.id === 'acme/shop')!;
    expect(acme).toMatchObject({ owner: 'acme', license: 'mit', stars: 42, createdAt: '2023-03-14T09:12:44Z', defaultBranch: 'main' });
  });

  it('takes a seeded sample: same seed same repositories, within the matching set', async () => {
    const args = { baseURL: gh.baseURL, dataDir, op: 'search', cap: 3, perPage: 2 };
    const a = await drive<{ repos: RepoRef[]; total: number }>({ ...args, sample: { limit: 3, seed: 11 } });
    const b = await drive<{ repos: RepoRef[] }>({ ...args, sample: { limit: 3, seed: 11 } });
    const seeds = await Promise.all([1, 2, 3, 4].map((seed) => drive<{ repos: RepoRef[] }>({ ...args, sample: { limit: 3, seed } })));
    expect(a.repos).toHaveLength(3);
    expect(a.repos.map((r) => r.id)).toEqual(b.repos.map((r) => r.id));
    const all = expectedDefaultSelection(gh.repos);
    for (const r of a.repos) expect(all).toContain(r.id);
    // Different seeds do not all pick the same three.
    expect(new Set(seeds.map((s) => s.repos.map((r) => r.id).sort().join(','))).size).toBeGreaterThan(1);
  });

  it('honours other filters: licenses, stars, windows', async () => {
    const out = await drive<{ repos: RepoRef[] }>({
      baseURL: gh.baseURL, dataDir, op: 'search', cap: 3, perPage: 2,
      filters: { licenses: ['mit', 'apache-2.0'], minStars: 5, createdFrom: '2023-01-01', createdTo: '2026-12-31' },
    });
    expect(out.repos.map((r) => r.id).sort()).toEqual(['acme/shop', 'acme/webapp', 'apache/thing', 'datalab/mlkit']);
  });

  it('downloads over https only, within a size cap and a deadline: anything else is a skip with the reason', async () => {
    // A redirect to plain http elsewhere (another server, which must never be asked).
    const elsewhere: string[] = [];
    const other = http.createServer((req, res) => {
      elsewhere.push(req.url ?? '');
      res.end('not a tarball');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const port = (other.address() as AddressInfo).port;
    const recorded = (id: string) => gh.repos.find((r) => r.full_name === id)!;
    gh.tarballRedirects.set('acme/webapp', `http://127.0.0.1:${port}/webapp.tar.gz`);
    gh.stalledTarballs.add('datalab/mlkit');
    try {
      const refs = ['acme/webapp', 'acme/shop', 'datalab/mlkit'].map((id) => ref(id, recorded(id)._recorded.head_sha));
      const shopBytes = gh.tarballs.get('acme/shop')!.length;
      const out = await drive<{ results: SnapshotResult[] }>({ baseURL: gh.baseURL, dataDir: path.join(dataDir, 'guarded'), op: 'snapshot', refs, maxTarballBytes: shopBytes - 1, tarballDeadlineMs: 1500, retries: 0 });
      expect(out.results[0]).toEqual({ ok: false, skip: { repoId: 'acme/webapp', stage: 'fetch', reason: `tarball: refused http URL http://127.0.0.1:${port}: source downloads use https only` } });
      expect(elsewhere).toEqual([]);
      expect(out.results[1]).toEqual({ ok: false, skip: { repoId: 'acme/shop', stage: 'fetch', reason: `tarball: ${shopBytes} bytes, larger than ${shopBytes - 1} bytes (crawl.github.maxTarballMb): refused` } });
      expect(out.results[2]).toEqual({ ok: false, skip: { repoId: 'datalab/mlkit', stage: 'fetch', reason: 'tarball: not downloaded within 1.5 s (crawl.github.downloadTimeoutSec): refused' } });
      // The same tarballs within the limits are downloaded (the mlkit one once it no longer stalls).
      gh.stalledTarballs.clear();
      const fine = await drive<{ results: SnapshotResult[] }>({ baseURL: gh.baseURL, dataDir: path.join(dataDir, 'guarded'), op: 'snapshot', refs: refs.slice(1), maxTarballBytes: 1024 * 1024, tarballDeadlineMs: 60_000, retries: 0 });
      expect(fine.results.map((r) => (r.ok ? "ok" : r.skip.reason))).toEqual(["ok", "ok"]);
    } finally {
      gh.tarballRedirects.clear();
      gh.stalledTarballs.clear();
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
    // A base URL that is not https (other than a local stand-in on the loopback interface) is refused outright.
    await expect(drive({ baseURL: 'http://example.com', dataDir, op: 'snapshot', refs: [ref('acme/shop')] })).rejects.toThrow(/github\.baseUrl http:\/\/example\.com: refused http URL/);
  });

  it('pins, downloads and extracts snapshots; records every bad repository as a skip and goes on', async () => {
    const refs = ['acme/shop', 'ghost/no-tarball', 'nobody/missing', 'pics/only-images', 'huge/monorepo', 'oldtimer/legacy'].map((id) => ref(id));
    const out = await drive<{ results: SnapshotResult[] }>({ baseURL: gh.baseURL, dataDir, op: 'snapshot', refs, maxSizeKb: 10 * 1024 });
    const byId = new Map(out.results.map((r, i) => [refs[i]!.id, r]));
    const shop = byId.get('acme/shop')!;
    if (!shop.ok) throw new Error(shop.skip.reason);
    const recorded = gh.repos.find((r) => r.full_name === 'acme/shop')!;
    expect(shop.snapshot.commit).toBe(recorded._recorded.head_sha);
    // The head commit's date comes with the pin: the sandbox resolves packages as of it.
    expect(shop.ref.commitDate).toBe('2023-03-14T09:12:44.000Z');
    expect(shop.snapshot.reused).toBe(false);
    expect(fs.existsSync(path.join(shop.snapshot.dir, 'shop/core/cart.py'))).toBe(true);
    expect(shop.snapshot.pythonFiles).toBeGreaterThan(5);
    expect(byId.get('ghost/no-tarball')).toEqual({ ok: false, skip: { repoId: 'ghost/no-tarball', stage: 'fetch', reason: 'tarball not found (404)' } });
    expect(byId.get('nobody/missing')).toEqual({ ok: false, skip: { repoId: 'nobody/missing', stage: 'resolve', reason: 'repository not found (404)' } });
    const images = byId.get('pics/only-images')!;
    expect(images.ok).toBe(false);
    if (!images.ok) expect(images.skip).toMatchObject({ stage: 'extract', reason: expect.stringMatching(/^no Python files/) });
    const huge = byId.get('huge/monorepo')!;
    expect(huge.ok).toBe(false);
    if (!huge.ok) expect(huge.skip.reason).toMatch(/too large \(50000 KB > 10240 KB\)/);
    // The legacy snapshot keeps its escaping symlink and non-UTF-8 file; the analysis skips them.
    const legacy = byId.get('oldtimer/legacy')!;
    if (!legacy.ok) throw new Error(legacy.skip.reason);
    const analysis = await analyzeRepository(legacy.snapshot.dir);
    const reasons = new Map(analysis.skipped.map((s) => [s.path, s.reason]));
    expect(reasons.get('pkg/escape.py')).toBe('symlink points outside the repository');
    expect(reasons.get('pkg/latin.py')).toBe('not valid UTF-8 text');
    expect(reasons.get('pkg/old.py')).toMatch(/Python 2 print/);
    expect(analysis.functions.map((f) => f.qualname)).toContain('use');
  });

  it('reuses a stored snapshot without downloading again', async () => {
    const before = gh.log.filter((l) => l.includes('/tarball/')).length;
    const out = await drive<{ results: SnapshotResult[] }>({ baseURL: gh.baseURL, dataDir, op: 'snapshot', refs: [ref('acme/shop')] });
    const shop = out.results[0]!;
    expect(shop.ok && shop.snapshot.reused).toBe(true);
    expect(gh.log.filter((l) => l.includes('/tarball/')).length).toBe(before);
  });

  it('keeps a commit given by a list and retries through 5xx and rate limits', async () => {
    const sha = gh.repos.find((r) => r.full_name === 'acme/webapp')!._recorded.head_sha;
    gh.faults.set('/repos/acme/webapp', ['server-error', 'too-many-requests']);
    gh.faults.set('/codeload/acme/webapp', ['rate-limit', 'secondary-rate-limit']);
    const out = await drive<{ results: SnapshotResult[]; logs: string[] }>({ baseURL: gh.baseURL, dataDir, op: 'snapshot', refs: [ref('acme/webapp', sha)] });
    const web = out.results[0]!;
    if (!web.ok) throw new Error(web.skip.reason);
    expect(web.snapshot.commit).toBe(sha);
    expect(web.ref.commitDate).toBe('2023-06-02T17:40:01.000Z');
    expect(fs.existsSync(path.join(web.snapshot.dir, 'app/services/users.py'))).toBe(true);
    expect(gh.faults.get('/repos/acme/webapp')).toEqual([]);
    expect(gh.faults.get('/codeload/acme/webapp')).toEqual([]);
    expect(out.logs.some((l) => /^rate limited on GET/.test(l))).toBe(true);
    expect(out.logs.some((l) => /^secondary rate limit on GET/.test(l))).toBe(true);
  });

  it('skips a listed commit the repository does not have, before downloading anything', async () => {
    const before = gh.log.filter((l) => l.includes('/tarball/')).length;
    const bogus = 'f'.repeat(40);
    const out = await drive<{ results: SnapshotResult[] }>({ baseURL: gh.baseURL, dataDir, op: 'snapshot', refs: [ref('acme/shop', bogus)] });
    expect(out.results[0]).toEqual({ ok: false, skip: { repoId: 'acme/shop', stage: 'resolve', reason: expect.stringMatching(new RegExp(`^commit ${bogus}: HTTP 422`)) } });
    expect(gh.log.filter((l) => l.includes('/tarball/')).length).toBe(before);
  });

  it("retries a tarball's server errors within its deadline: no client error retried, no wait begun that would end past the deadline", async () => {
    const sha = (id: string) => gh.repos.find((r) => r.full_name === id)!._recorded.head_sha;
    const refs = (ids: string[]) => ids.map((id) => ref(id, sha(id)));
    const asked = (id: string) => gh.log.filter((l) => l.startsWith(`GET /repos/${id}/tarball/`)).length;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retries-'));
    const before = new Map(['acme/webapp', 'acme/shop', 'datalab/mlkit', 'ghost/no-tarball'].map((id) => [id, asked(id)]));
    const more = (id: string) => asked(id) - before.get(id)!;
    const codeloads = () => gh.log.filter((l) => l.startsWith('GET /codeload/ghost/no-tarball/')).length;
    const ghostBefore = codeloads();
    try {
      // Two 502s, then the tarball: three requests; a plain 403 and a 404 are asked once each.
      gh.faults.set('/repos/acme/webapp/tarball', ['server-error', 'server-error']);
      gh.faults.set('/repos/acme/shop/tarball', ['forbidden']);
      const first = await drive<{ results: SnapshotResult[]; logs: string[] }>({
        baseURL: gh.baseURL, dataDir: path.join(dir, 'a'), op: 'snapshot', refs: refs(['acme/webapp', 'acme/shop', 'ghost/no-tarball']), retries: 3, retryUnitMs: 10, tarballDeadlineMs: 30_000,
      });
      expect(first.results.map((r) => (r.ok ? 'ok' : r.skip.reason))).toEqual(['ok', 'tarball: HTTP 403 Resource not accessible', 'tarball not found (404)']);
      expect([more('acme/webapp'), more('acme/shop'), codeloads() - ghostBefore]).toEqual([3, 1, 1]);
      // The waits grow as 1, 4 units.
      expect(first.logs.filter((l) => l.startsWith('tarball of acme/webapp failed'))).toEqual([
        'tarball of acme/webapp failed (tarball: HTTP 502 Server Error); retry 1 in 10 ms',
        'tarball of acme/webapp failed (tarball: HTTP 502 Server Error); retry 2 in 40 ms',
      ]);

      // A wait that would end past the deadline is not begun: the download is refused at once, after
      // one request, whether the wait is the retry's own or a rate limit's (reset in an hour).
      for (const id of ['acme/webapp', 'datalab/mlkit']) before.set(id, asked(id));
      gh.faults.set('/repos/acme/webapp/tarball', ['server-error', 'server-error', 'server-error']);
      gh.faults.set('/repos/datalab/mlkit/tarball', ['rate-limit-long']);
      const second = await drive<{ results: SnapshotResult[]; logs: string[] }>({
        baseURL: gh.baseURL, dataDir: path.join(dir, 'b'), op: 'snapshot', refs: refs(['acme/webapp', 'datalab/mlkit']), retries: 3, retryUnitMs: 600_000, tarballDeadlineMs: 20_000,
      });
      expect(second.results[0]).toEqual({
        ok: false,
        skip: { repoId: 'acme/webapp', stage: 'fetch', reason: 'tarball: not downloaded within 20 s (crawl.github.downloadTimeoutSec): refused (HTTP 502; a retry in 600 s would start past it)' },
      });
      const mlkit = second.results[1]!;
      expect(mlkit.ok).toBe(false);
      if (!mlkit.ok) expect(mlkit.skip.reason).toMatch(/^tarball: not downloaded within 20 s \(crawl\.github\.downloadTimeoutSec\): refused \(rate limited; a retry in 36\.\d+ s would start past it\)$/);
      expect([more('acme/webapp'), more('datalab/mlkit')]).toEqual([1, 1]);
      expect(gh.faults.get('/repos/acme/webapp/tarball')).toEqual(['server-error', 'server-error']);
      expect(second.logs.some((l) => /^rate limited on GET \S*tarball\S*; not retried$/.test(l))).toBe(true);

      // The deadline covers every attempt: a 502, then an answer that never comes.
      before.set('acme/shop', asked('acme/shop'));
      gh.faults.set('/repos/acme/webapp/tarball', []);
      gh.faults.set('/repos/acme/shop/tarball', ['server-error', 'hang']);
      const third = await drive<{ results: SnapshotResult[] }>({
        baseURL: gh.baseURL, dataDir: path.join(dir, 'c'), op: 'snapshot', refs: refs(['acme/shop']), retries: 3, retryUnitMs: 10, tarballDeadlineMs: 1500,
      });
      expect(third.results[0]).toEqual({ ok: false, skip: { repoId: 'acme/shop', stage: 'fetch', reason: 'tarball: not downloaded within 1.5 s (crawl.github.downloadTimeoutSec): refused' } });
      expect(more('acme/shop')).toBe(2);
    } finally {
      for (const key of ['/repos/acme/webapp/tarball', '/repos/acme/shop/tarball', '/repos/datalab/mlkit/tarball']) gh.faults.delete(key);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is wired from the configuration: base URL, snapshot folder under the data directory, size limit', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'data-'));
    try {
      const out = await drive<{ result: SnapshotResult }>({ baseURL: gh.baseURL, dataDir: dir, op: 'from-config', refs: [ref('datalab/mlkit')] });
      if (!out.result.ok) throw new Error(out.result.skip.reason);
      expect(out.result.snapshot.dir).toBe(path.join(dir, 'snapshots', 'datalab', 'mlkit', gh.repos.find((r) => r.full_name === 'datalab/mlkit')!._recorded.head_sha, 'tree'));
      expect(out.result.ref.createdAt).toBe('2023-11-20T08:00:00Z');
      const huge = await drive<{ result: SnapshotResult }>({ baseURL: gh.baseURL, dataDir: dir, op: 'from-config', refs: [ref('huge/monorepo')] });
      expect(huge.result.ok).toBe(false);
      // The download's size cap and deadline are crawl.github.maxTarballMb and downloadTimeoutSec:
      // a tarball of 1.5 MiB against a cap of 1 MiB, and one that stalls against a deadline of 1 s.
      const big = gh.tarballs.get('acme/shop')!;
      gh.tarballs.set('acme/shop', Buffer.concat([big, randomBytes(1536 * 1024)]));
      gh.stalledTarballs.add('datalab/mlkit');
      try {
        const capped = await drive<{ result: SnapshotResult }>({ baseURL: gh.baseURL, dataDir: dir, op: 'from-config', refs: [ref('acme/shop')], crawlGithub: { maxTarballMb: 1 } });
        expect(capped.result).toEqual({ ok: false, skip: { repoId: 'acme/shop', stage: 'fetch', reason: `tarball: ${big.length + 1536 * 1024} bytes, larger than 1048576 bytes (crawl.github.maxTarballMb): refused` } });
        const late = await drive<{ result: SnapshotResult }>({ baseURL: gh.baseURL, dataDir: path.join(dir, 'late'), op: 'from-config', refs: [ref('datalab/mlkit')], crawlGithub: { downloadTimeoutSec: 1 } });
        expect(late.result).toEqual({ ok: false, skip: { repoId: 'datalab/mlkit', stage: 'fetch', reason: 'tarball: not downloaded within 1 s (crawl.github.downloadTimeoutSec): refused' } });
      } finally {
        gh.tarballs.set('acme/shop', big);
        gh.stalledTarballs.clear();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
