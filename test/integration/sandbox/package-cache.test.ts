/** Package installs: the install container (bridge network), the host fallback, the shared cache. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PackageCache } from '../../../activities/sandbox/package-cache';
import { ensureSandboxImage } from '../../../sandbox-image/build';
import { docker } from './sandbox-env';

describe('PackageCache', () => {
  let dir: string;
  let image: string;

  beforeAll(async () => {
    image = (await ensureSandboxImage({ docker })).tag;
  });

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-package-cache-'));
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('installs a set once, content-addressed, with versions; concurrent asks share one install', async () => {
    const cache = new PackageCache({ docker, image, packagesDir: dir, workerId: `pc-${process.pid}`, installTimeoutSec: 300 });
    const [a, b] = await Promise.all([cache.ensure(['six==1.16.0']), cache.ensure(['SIX==1.16.0'])]);
    expect(a).toEqual(b);
    if (!a.ok) throw new Error(a.error);
    expect(a.set.packages).toEqual([{ name: 'six', version: '1.16.0' }]);
    expect(a.set.containerPath).toBe(`/opt/repost/package-cache/${a.set.key}`);
    expect(fs.readdirSync(dir).filter((e) => !e.startsWith('.'))).toEqual([a.set.key]);
    expect(fs.existsSync(path.join(a.set.hostPath, 'six.py'))).toBe(true);
    expect(cache.lookup(['six==1.16.0'])?.key).toBe(a.set.key);
  });

  test('a distribution that does not exist fails with pip’s reason and is remembered', async () => {
    const cache = new PackageCache({ docker, image, packagesDir: dir, workerId: `pc-${process.pid}`, installTimeoutSec: 300 });
    const r = await cache.ensure(['repost-no-such-distribution-xyz']);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatch(/No matching distribution|Could not find a version/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  test('when the install container cannot verify the registry, the host installs for the image’s Python', async () => {
    // No CA bundle for the container: behind an intercepting proxy its TLS check fails, and the
    // host's pip (which trusts the proxy) installs wheels for CPython 3.11 on manylinux instead.
    const cache = new PackageCache({ docker, image, packagesDir: dir, workerId: `pc-${process.pid}`, installTimeoutSec: 300, caBundle: null });
    const r = await cache.ensure(['six==1.16.0']);
    if (!r.ok) throw new Error(r.error);
    expect(r.set.packages).toEqual([{ name: 'six', version: '1.16.0' }]);
    const manifest = JSON.parse(fs.readFileSync(path.join(r.set.hostPath, '.repost-packages.json'), 'utf8')) as { installedWith: string };
    // Which way it went depends on the network: both must yield the same installed set.
    expect(['container', 'host']).toContain(manifest.installedWith);
  });
});
