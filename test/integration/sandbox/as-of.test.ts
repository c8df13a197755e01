/**
 * Packages as of the code's date, against a package index on a local port (upload times as PyPI
 * gives them), the real uv and the real sandbox: the releases of then, a package with no release
 * by then (or none the index dates) at its newest alone, a local wheel recorded as undated, and a
 * module a later release removed still importable by code of its time.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PackageStore, type PackageSettings } from '../../../activities/sandbox/package-store';
import { runGroundTruth, type RepostRecord } from '../../../activities/sandbox/repost-records';
import { ensureSandboxImage } from '../../../sandbox-image/build';
import { docker, freshStore, makeExecutor, testConfig } from './sandbox-env';
import { startLocalIndex, wheelOf, type IndexRelease, type LocalIndex } from './local-index';

/** A release of June 2021, and its successor of 2023 that dropped the `legacy` module. */
const RELEASES: IndexRelease[] = [
  { name: 'repost-dated', version: '1.0', uploaded: '2021-03-01T10:00:00Z', files: { 'repost_dated/__init__.py': 'VERSION = "1.0"\n', 'repost_dated/legacy.py': 'def answer():\n    return 41\n' } },
  { name: 'repost-dated', version: '2.0', uploaded: '2023-06-01T10:00:00Z', files: { 'repost_dated/__init__.py': 'VERSION = "2.0"\n' } },
  { name: 'repost-late', version: '1.0', uploaded: '2023-01-01T10:00:00Z', files: { 'repost_late/__init__.py': 'VERSION = "1.0"\n' } },
  { name: 'repost-undated', version: '1.0', files: { 'repost_undated/__init__.py': 'VERSION = "1.0"\n' } },
];
const CUTOFF = '2021-06-01T00:00:00Z';

let image: string;
let index: LocalIndex;
const roots: string[] = [];

beforeAll(async () => {
  image = (await ensureSandboxImage({ docker })).tag;
  index = await startLocalIndex(RELEASES);
});

afterAll(async () => {
  await index.close();
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

/** Settings of a store that knows only the local index, with a cache of its own. */
function localPackages(settings: Partial<PackageSettings> = {}): PackageSettings {
  const root = freshStore('repost-asof-');
  roots.push(root);
  return { ...testConfig().packages, indexUrl: index.url, uvCacheDir: path.join(root, 'uv-cache'), ...settings };
}

function store(settings: Partial<PackageSettings> = {}, now?: () => number): PackageStore {
  const root = freshStore('repost-asof-store-');
  roots.push(root);
  const workerId = `asof-${process.pid}`;
  const config = testConfig({ workerId });
  return new PackageStore({ docker, image, root, workerId, settings: localPackages(settings), limits: config, ...(now ? { now } : {}) });
}

test('the releases of then; the same names at their newest are another set, with their own environment and failure memory', async () => {
  const s = store({}, () => 1_000_000);
  const dated = await s.ensure(['repost-dated'], { asOf: CUTOFF });
  if (!dated.ok) throw new Error(dated.error);
  expect(dated.set.packages).toEqual([{ name: 'repost-dated', version: '1.0', asOf: CUTOFF }]);
  expect(dated.set.asOf).toBe(CUTOFF);
  expect(dated.set.notes).toEqual([`packages as of ${CUTOFF}`]);
  expect(fs.existsSync(path.join(dated.set.hostPath, 'repost_dated', 'legacy.py'))).toBe(true);

  const newest = await s.ensure(['repost-dated']);
  if (!newest.ok) throw new Error(newest.error);
  expect(newest.set.key).not.toBe(dated.set.key);
  expect(newest.set.asOf).toBeNull();
  expect(newest.set.packages).toEqual([{ name: 'repost-dated', version: '2.0' }]);
  expect(newest.set.notes).toEqual([]);
  expect(fs.existsSync(path.join(newest.set.hostPath, 'repost_dated', 'legacy.py'))).toBe(false);

  // Each is found as itself; a third date finds neither.
  expect(s.lookup(['repost-dated'])?.packages).toEqual(newest.set.packages);
  expect(s.lookup(['repost-dated'], CUTOFF)?.packages).toEqual(dated.set.packages);
  expect(s.lookup(['repost-dated'], '2021-07-01T00:00:00Z')).toBeNull();

  // A name the index does not know fails as such at any date (no fallback to the newest), and is
  // remembered under its own date only.
  const missing = await s.ensure(['repost-no-such-distribution'], { asOf: CUTOFF });
  expect(missing).toMatchObject({ ok: false, failure: { kind: 'not-found', packages: ['repost-no-such-distribution'] } });
  const asked = index.log.filter((p) => p.startsWith('/simple/repost-no-such-distribution')).length;
  expect(await s.ensure(['repost-no-such-distribution'], { asOf: CUTOFF })).toEqual(missing);
  expect(index.log.filter((p) => p.startsWith('/simple/repost-no-such-distribution')).length).toBe(asked);
  await s.ensure(['repost-no-such-distribution']);
  expect(index.log.filter((p) => p.startsWith('/simple/repost-no-such-distribution')).length).toBeGreaterThan(asked);
});

test('a package with no release by then, or none the index dates, takes its newest, alone; the others keep the date', async () => {
  const s = store();
  const r = await s.ensure(['repost-dated', 'repost-late', 'repost-undated'], { asOf: CUTOFF });
  if (!r.ok) throw new Error(r.error);
  expect(r.set.packages).toEqual([
    { name: 'repost-dated', version: '1.0', asOf: CUTOFF },
    { name: 'repost-late', version: '1.0' },
    { name: 'repost-undated', version: '1.0' },
  ]);
  expect(r.set.notes).toHaveLength(1);
  expect(r.set.notes[0]).toMatch(new RegExp(`^packages as of ${CUTOFF}, except repost-late, repost-undated at the newest release \\(`));
});

test('a wheel from a find-links folder has no upload date: recorded as not chosen by the date', async () => {
  const links = freshStore('repost-asof-links-');
  roots.push(links);
  const wheel = await wheelOf({ name: 'repost-linked', version: '3.0', files: { 'repost_linked/__init__.py': 'VERSION = "3.0"\n' } });
  fs.writeFileSync(path.join(links, wheel.fileName), wheel.body);
  const s = store({ findLinks: [links] });
  const r = await s.ensure(['repost-dated', 'repost-linked'], { asOf: CUTOFF });
  if (!r.ok) throw new Error(r.error);
  expect(r.set.packages).toEqual([
    { name: 'repost-dated', version: '1.0', asOf: CUTOFF },
    { name: 'repost-linked', version: '3.0' },
  ]);
  expect(r.set.notes.join('\n')).toMatch(/repost-linked/);
});

describe('in the sandbox', () => {
  const script = 'from repost_dated.legacy import answer\nimport repost_dated\nprint(repost_dated.VERSION, answer())\n';

  test("a run's packages follow its code's date and say so; without a date, or with one that is not a date, the newest", async () => {
    const executor = await makeExecutor('pool', { workerId: `asof-run-${process.pid}`, packages: localPackages() }, freshStore('repost-asof-exec-'));
    try {
      // May 2nd plus 29 days of grace, rounded up to midnight: June 1st.
      const dated = await executor.run({ script, install: true, packagesAsOf: { date: '2021-05-02T08:00:00Z', graceSec: 29 * 86400 } });
      expect(dated.status).toBe('passed');
      expect(dated.stdout.trim()).toBe('1.0 41');
      expect(dated.packages).toEqual([{ name: 'repost-dated', version: '1.0', asOf: CUTOFF }]);
      expect(dated.notes).toContain(`packages as of ${CUTOFF}`);

      // The code's module is gone from the newest release: the script cannot run with it.
      const newest = await executor.run({ script, install: true });
      expect(newest.status).toBe('error');
      expect(newest.exception?.type).toBe('ModuleNotFoundError');
      expect(newest.packages).toEqual([{ name: 'repost-dated', version: '2.0' }]);

      const undated = await executor.run({ script, install: true, packagesAsOf: { date: 'last spring' } });
      expect(undated.packages).toEqual([{ name: 'repost-dated', version: '2.0' }]);
      expect(undated.notes).toContain('the code\'s date "last spring" is not a date; packages at their newest releases');
    } finally {
      await executor.close();
    }
  });

  test("a published record's ground truth runs as of the date given for the set, unless the record carries its own", async () => {
    const executor = await makeExecutor('pool', { workerId: `asof-gt-${process.pid}`, packages: localPackages({ asOfGraceSec: 0 }) }, freshStore('repost-asof-gt-'));
    const evalScript = [
      'from repost_dated.legacy import answer',
      '',
      'def f(x):',
      '    return answer() + x',
      '',
      'def test_f():',
      '    assert f(1) == f_new_implementation(1) == 42',
      '',
      "if __name__ == '__main__':",
      '    test_f()',
      '',
    ].join('\n');
    const record: RepostRecord = { func_name: 'f', idx: 'asof-1', orig_func: 'def f(x):\n    return answer() + x\n', eval_script: evalScript };
    try {
      // No grace period here: the cutoff is the date itself.
      const byOption = await runGroundTruth(executor, record, { asOf: '2021-05-31' });
      expect(byOption.result.status).toBe('passed');
      expect(byOption.result.packages).toEqual([{ name: 'repost-dated', version: '1.0', asOf: '2021-05-31T00:00:00Z' }]);
      // The record's own date wins over the set's: by 2024 the module was gone.
      const own = await runGroundTruth(executor, { ...record, commit_date: '2024-01-01T00:00:00Z' }, { asOf: '2021-05-31' });
      expect(own.result.status).toBe('error');
      expect(own.result.exception?.type).toBe('ModuleNotFoundError');
      expect(own.result.packages).toEqual([{ name: 'repost-dated', version: '2.0', asOf: '2024-01-01T00:00:00Z' }]);
    } finally {
      await executor.close();
    }
  });
});
