/** Repository lists, local folders, the train/eval split and the snapshot store. */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { listSource, localSnapshot, localSource, RepoListError, SnapshotStore, splitOf } from '../../../activities/sources';
import { hashTree } from '../../../activities/store/snapshots';

const REPOS = path.resolve(__dirname, '../../fixtures/repos');

describe('listSource', () => {
  it('reads owner/name@sha lines with comments, blank lines and duplicates', () => {
    const refs = listSource('# repositories\nacme/shop@0123456789abcdef0123456789abcdef01234567\n\nDataLab/ml.kit  # no commit: pinned later\nacme/shop@0123456789ABCDEF0123456789abcdef01234567\n');
    expect(refs.map((r) => [r.id, r.commit])).toEqual([
      ['acme/shop', '0123456789abcdef0123456789abcdef01234567'],
      ['DataLab/ml.kit', null],
    ]);
    expect(refs[0]).toMatchObject({ owner: 'acme', name: 'shop', createdAt: null });
  });

  it('rejects malformed lines with their line numbers', () => {
    expect(() => listSource('acme/shop\nnot a repo\nx/y@zz\n')).toThrow(RepoListError);
    expect(() => listSource('acme/shop\nnot a repo\nx/y@zz\n')).toThrow(/line 2: "not a repo"[\s\S]*line 3: "x\/y@zz"/);
  });
});

describe('splitOf', () => {
  const windows = { trainWindow: { from: '2023-01-31', to: '2024-08-31' }, evalWindow: { from: '2024-09-01', to: '2026-12-31' } };
  it('assigns by creation day, inclusive windows, both configurable', () => {
    expect(splitOf('2023-01-31T00:00:01Z', windows)).toBe('train');
    expect(splitOf('2024-08-31T23:59:59Z', windows)).toBe('train');
    expect(splitOf('2024-09-01T00:00:00Z', windows)).toBe('eval');
    expect(splitOf('2023-01-30T23:00:00Z', windows)).toBeNull();
    expect(splitOf(null, windows)).toBeNull();
    expect(splitOf('2024-09-15', { ...windows, evalWindow: { from: '2024-10-01', to: '2025-01-01' } })).toBeNull();
  });
});

describe('local folders', () => {
  it('pins a folder by the hash of its contents, stable until a file changes', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'local-src-'));
    fs.cpSync(path.join(REPOS, 'shop'), dir, { recursive: true });
    const a = await localSource(dir);
    const b = await localSource(dir);
    expect(a.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(a.commit).toBe(b.commit);
    expect(a).toMatchObject({ id: `local/${path.basename(dir)}`, localPath: dir });
    fs.appendFileSync(path.join(dir, 'shop/util/text.py'), '\n# changed\n');
    expect((await localSource(dir)).commit).not.toBe(a.commit);
    const snap = await localSnapshot(a);
    expect(snap).toMatchObject({ dir, pythonFiles: 10, reused: true });
    await expect(localSource(path.join(dir, 'missing'))).rejects.toThrow(/not a directory/);
  });
});

describe('SnapshotStore', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'snap-store-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  const tarball = (dir: string, top: string) => execFileSync('tar', ['-czf', '-', '-C', path.dirname(dir), `--transform=s,^${path.basename(dir)},${top},`, path.basename(dir)]);

  it('extracts once per commit and reuses it; the tree matches the source', async () => {
    const store = new SnapshotStore(root);
    const tgz = tarball(path.join(REPOS, 'mlkit'), 'datalab-mlkit-abc1234');
    const first = await store.fromTarball('datalab/mlkit', 'abc1234', tgz);
    if (!first.ok) throw new Error(first.reason);
    expect(first.snapshot.reused).toBe(false);
    expect(first.snapshot.dir).toBe(path.join(root, 'datalab', 'mlkit', 'abc1234', 'tree'));
    expect((await hashTree(first.snapshot.dir)).hash).toBe((await hashTree(path.join(REPOS, 'mlkit'))).hash);
    const again = await store.fromTarball('datalab/mlkit', 'abc1234', Buffer.from('ignored: the snapshot exists'));
    expect(again.ok && again.snapshot.reused).toBe(true);
    expect(fs.readdirSync(path.join(root, 'datalab', 'mlkit'))).toEqual(['abc1234']);
  });

  it('refuses non-gzip data, gzip bombs over the limit, oversize tarballs and trees without Python', async () => {
    const store = new SnapshotStore(root);
    expect(await store.fromTarball('a/b', 'c1', Buffer.from('<html>404</html>'))).toEqual({ ok: false, reason: 'not a gzip tarball' });
    const bomb = zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024));
    const limits = { maxTarballBytes: 1024 * 1024, maxTreeBytes: 1024 * 1024 };
    expect(await store.fromTarball('a/b', 'c2', bomb, limits)).toEqual({ ok: false, reason: 'repository too large when unpacked (> 1048576 bytes)' });
    expect(await store.fromTarball('a/b', 'c3', Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.alloc(2 * 1024 * 1024)]), limits)).toMatchObject({ ok: false, reason: expect.stringMatching(/^tarball too large/) });
    const docs = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-only-'));
    fs.writeFileSync(path.join(docs, 'README.md'), '# nothing to see\n');
    expect(await store.fromTarball('a/b', 'c4', tarball(docs, 'a-b-c4'))).toEqual({ ok: false, reason: 'no Python files (1 files, none ending in .py)' });
    // Nothing half-written is left behind.
    expect(fs.existsSync(path.join(root, 'a', 'b')) ? fs.readdirSync(path.join(root, 'a', 'b')) : []).toEqual([]);
    expect(() => store.dirFor('a/b', '../etc')).toThrow(/not a commit id/);
  });
});

describe('configuration', () => {
  it('builds the crawl filters of each split from the crawl section', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { loadConfig } = require('../../../temporal.config') as typeof import('../../../temporal.config');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { crawlFiltersFromConfig } = require('../../../activities/sources') as typeof import('../../../activities/sources');
    const config = loadConfig({ env: {}, overrides: { crawl: { github: { licenses: ['mit', 'bsd-3-clause'], minStars: 3 } } } });
    expect(crawlFiltersFromConfig(config, 'train')).toEqual({
      language: 'Python', licenses: ['mit', 'bsd-3-clause'], includeForks: false, maxSizeKb: 10240, minStars: 3,
      createdFrom: '2023-01-31', createdTo: '2024-08-31', includeArchived: false,
    });
    expect(crawlFiltersFromConfig(config, 'eval')).toMatchObject({ createdFrom: '2024-09-01' });
  });
});
