/** Repository lists, local folders, the train/eval split and the crawl filters (the snapshot store's tarballs: test/integration/sources/snapshots.test.ts). */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { listSource, localSnapshot, localSource, RepoListError, splitOf } from '../../../activities/sources';

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

  it('takes a download\'s size cap and deadline from crawl.github, in MiB and seconds', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { loadConfig, ConfigError } = require('../../../temporal.config') as typeof import('../../../temporal.config');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { snapshotLimitsFromConfig } = require('../../../activities/sources') as typeof import('../../../activities/sources');
    const defaults = loadConfig({ env: {} });
    expect(defaults.crawl.github).toMatchObject({ maxTarballMb: 100, downloadTimeoutSec: 600 });
    expect(snapshotLimitsFromConfig(defaults)).toEqual({ maxTarballBytes: 100 * 1024 * 1024, maxTreeBytes: 400 * 1024 * 1024 });
    const set = loadConfig({ env: { REPOST_CRAWL_GITHUB_MAX_TARBALL_MB: '20', REPOST_CRAWL_GITHUB_DOWNLOAD_TIMEOUT_SEC: '90' } });
    expect(set.crawl.github).toMatchObject({ maxTarballMb: 20, downloadTimeoutSec: 90 });
    expect(snapshotLimitsFromConfig(set)).toEqual({ maxTarballBytes: 20 * 1024 * 1024, maxTreeBytes: 80 * 1024 * 1024 });
    expect(() => loadConfig({ env: { REPOST_CRAWL_GITHUB_DOWNLOAD_TIMEOUT_SEC: '0' } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { REPOST_CRAWL_GITHUB_MAX_TARBALL_MB: '1.5' } })).toThrow(/crawl\.github\.maxTarballMb/);
  });
});
