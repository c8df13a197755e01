/**
 * The package store against the real index, uv and Docker: environments hard-linked from one
 * cache, failures named and remembered only when permanent, installs stopped by cancellation,
 * and packages without wheels built offline in the sandbox, never on the host.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { PackageStore, type PackageSettings } from '../../../activities/sandbox/package-store';
import { ensureSandboxImage } from '../../../sandbox-image/build';
import { BUNDLED_UV } from '../../../activities/sandbox/uv';
import { containerEnd, containersOf, docker, freshStore, makeExecutor, testConfig, waitFor } from './sandbox-env';
import { makeSdist } from './local-sdist';

let image: string;
const roots: string[] = [];

beforeAll(async () => {
  image = (await ensureSandboxImage({ docker })).tag;
});

afterAll(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

function store(settings: Partial<PackageSettings> = {}, workerId = `store-${process.pid}`, now?: () => number): PackageStore {
  const root = freshStore();
  roots.push(root);
  const config = testConfig({ workerId });
  return new PackageStore({ docker, image, root, workerId, settings: { ...config.packages, ...settings }, limits: config, ...(now ? { now } : {}) });
}

/** A uv wrapper that counts its invocations, to see whether a failure was remembered. */
function countingUv(): { path: string; calls: () => number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-uv-count-'));
  roots.push(dir);
  const log = path.join(dir, 'calls');
  const wrapper = path.join(dir, 'uv');
  fs.writeFileSync(wrapper, `#!/bin/sh\necho x >> ${log}\nexec ${BUNDLED_UV} "$@"\n`, { mode: 0o755 });
  return { path: wrapper, calls: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0) };
}

test('a set installs once; concurrent asks share it; its files are hard links into the one cache', async () => {
  const s = store();
  const [a, b] = await Promise.all([s.ensure(['six==1.16.0']), s.ensure(['SIX==1.16.0'])]);
  expect(a).toEqual(b);
  if (!a.ok) throw new Error(a.error);
  expect(a.set.packages).toEqual([{ name: 'six', version: '1.16.0' }]);
  expect(a.set.containerPath).toBe(`/opt/repost/package-cache/${a.set.key}`);
  expect(fs.readdirSync(s.envsDir).filter((e) => !e.startsWith('.'))).toEqual([a.set.key]);
  expect(fs.statSync(path.join(a.set.hostPath, 'six.py')).nlink).toBeGreaterThanOrEqual(2);
});

test('a package present in two requirement sets is stored once: the same inode', async () => {
  const s = store();
  const one = await s.ensure(['six==1.16.0']);
  const two = await s.ensure(['six==1.16.0', 'pyyaml']);
  if (!one.ok || !two.ok) throw new Error('install failed');
  expect(one.set.key).not.toBe(two.set.key);
  const a = fs.statSync(path.join(one.set.hostPath, 'six.py'));
  const b = fs.statSync(path.join(two.set.hostPath, 'six.py'));
  expect(b.ino).toBe(a.ino);
  expect(b.dev).toBe(a.dev);
  expect(two.set.packages.map((p) => p.name)).toEqual(['PyYAML', 'six']);
});

test('failures name the package and the reason; permanent ones are remembered for a while, transient ones not at all', async () => {
  const uv = countingUv();
  // The failure memory is read on an injected clock: it moves only when the test moves it.
  let clock = 1_000_000;
  const s = store({ uvPath: uv.path, failureMemorySec: 2 }, undefined, () => clock);
  const missing = await s.ensure(['repost-no-such-distribution-xyz']);
  expect(missing).toMatchObject({ ok: false, failure: { kind: 'not-found', packages: ['repost-no-such-distribution-xyz'] } });
  const calls = uv.calls();
  clock += 1999;
  expect(await s.ensure(['repost-no-such-distribution-xyz'])).toEqual(missing);
  expect(uv.calls()).toBe(calls); // remembered: uv not asked again
  clock += 2;
  await s.ensure(['repost-no-such-distribution-xyz']);
  expect(uv.calls()).toBeGreaterThan(calls); // forgotten after failureMemorySec

  const noWheel = await s.ensure(['pywin32']);
  expect(noWheel).toMatchObject({ ok: false, failure: { kind: 'no-wheel', packages: ['pywin32'] } });
  if (!noWheel.ok) expect(noWheel.error).toMatch(/pywin32/);

  const conflict = await s.ensure(['numpy<1.0', 'pandas>=2']);
  expect(conflict).toMatchObject({ ok: false, failure: { kind: 'conflict' } });

  // The index unreachable (a closed local port): a network failure, asked again next time.
  const offline = store({ uvPath: uv.path, indexUrl: 'http://127.0.0.1:9/simple' });
  const first = await offline.ensure(['six']);
  expect(first).toMatchObject({ ok: false, failure: { kind: 'network' } });
  const before = uv.calls();
  await offline.ensure(['six']);
  expect(uv.calls()).toBeGreaterThan(before);
});

describe('source-only packages', () => {
  const links = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-find-links-'));
  const hostMarker = path.join(os.tmpdir(), `repost-setup-ran-on-host-${process.pid}`);
  let listener: net.Server;
  let port = 0;
  const connections: string[] = [];

  beforeAll(async () => {
    roots.push(links);
    listener = net.createServer((socket) => {
      connections.push(socket.remoteAddress ?? '?');
      socket.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    port = (listener.address() as net.AddressInfo).port;
    // Its build step tries to reach a server on this host and to leave a file on this host.
    makeSdist(
      links,
      'repost-netprobe',
      '1.0',
      [
        'import os, socket',
        'from setuptools import setup',
        'probe = {"uid": os.getuid(), "interfaces": sorted(os.listdir("/sys/class/net"))}',
        'try:',
        `    socket.create_connection(("127.0.0.1", ${port}), timeout=3).close()`,
        '    probe["connected"] = True',
        'except OSError as exc:',
        '    probe["connected"] = False',
        'try:',
        `    open(${JSON.stringify(hostMarker)}, "w").write("ran")`,
        'except OSError:',
        '    pass',
        'os.makedirs("repost_netprobe", exist_ok=True)',
        'open("repost_netprobe/__init__.py", "w").write("PROBE = %r\\n" % (probe,))',
        'setup(name="repost-netprobe", version="1.0", packages=["repost_netprobe"])',
        '',
      ].join('\n'),
    );
    makeSdist(links, 'repost-slowbuild', '1.0', 'import time\ntime.sleep(120)\nfrom setuptools import setup\nsetup(name="repost-slowbuild", version="1.0")\n');
    makeSdist(links, 'repost-brokenbuild', '1.0', 'raise SystemExit("this package cannot be built")\n');
  });

  afterAll(async () => {
    await new Promise((r) => listener.close(r));
    fs.rmSync(hostMarker, { force: true });
  });

  test('a package whose setup.py connects out is built in the sandbox without network, never on the host', async () => {
    const root = freshStore();
    roots.push(root);
    const executor = await makeExecutor('pool', { workerId: `netprobe-${process.pid}`, packages: { ...testConfig().packages, findLinks: [links] } }, root);
    try {
      const result = await executor.run({ script: 'import repost_netprobe\nprint(repost_netprobe.PROBE)\n', install: true });
      expect(result.stderr).toBe('');
      expect(result.status).toBe('passed');
      // The build ran as the sandbox user, saw only a loopback interface and reached nothing.
      expect(result.stdout.trim()).toBe("{'uid': 10001, 'interfaces': ['lo'], 'connected': False}");
      expect(result.packages).toEqual([{ name: 'repost-netprobe', version: '1.0' }]);
      expect(connections).toEqual([]);
      expect(fs.existsSync(hostMarker)).toBe(false);
      expect(fs.readdirSync(path.join(root, 'wheelhouse'))).toEqual(['repost_netprobe-1.0-py3-none-any.whl']);
    } finally {
      await executor.close();
    }
  });

  test('a build that fails is reported as such, with the package and the build output', async () => {
    const s = store({ findLinks: [links] });
    const r = await s.ensure(['repost-brokenbuild']);
    expect(r).toMatchObject({ ok: false, failure: { kind: 'build-failed', packages: ['repost-brokenbuild'] } });
    if (!r.ok) expect(r.failure.message).toMatch(/this package cannot be built/);
  });

  test('the time limit stops a build, says so, and is not remembered', async () => {
    const workerId = `slow-build-${process.pid}`;
    const s = store({ findLinks: [links], installTimeoutSec: 8 }, workerId);
    const r = await s.ensure(['repost-slowbuild']);
    // The build sleeps 120 s: it was stopped at the limit, and its container is gone.
    expect(r).toMatchObject({ ok: false, failure: { kind: 'timeout', packages: ['repost-slowbuild'] } });
    if (!r.ok) expect(r.failure.message).toMatch(/time limit of 8s was reached while building repost-slowbuild/);
    expect(await containersOf(workerId)).toHaveLength(0);
    // Not remembered: the next ask tries again (and is cancelled right away here).
    const controller = new AbortController();
    const again = s.ensure(['repost-slowbuild'], { signal: controller.signal });
    controller.abort();
    expect(await again).toMatchObject({ ok: false, failure: { kind: 'cancelled' } });
  });

  test('cancelling an install stops its build container at once', async () => {
    const workerId = `cancel-build-${process.pid}`;
    const s = store({ findLinks: [links] }, workerId);
    const controller = new AbortController();
    const pending = s.ensure(['repost-slowbuild'], { signal: controller.signal });
    // The build's own container (`pip wheel`), not one that prepared its build requirements.
    const building = async () => (await containersOf(workerId)).find((c) => /\bpip wheel\b/.test(c.Command) && c.State === 'running');
    expect(await waitFor(async () => (await building()) !== undefined, 60_000)).toBe(true);
    const build = (await building())!;
    const ended = containerEnd(build.Id);
    controller.abort();
    expect(await pending).toMatchObject({ ok: false, failure: { kind: 'cancelled' } });
    // The build (a 120 s sleep, under a 300 s install limit) was killed by the cancellation, not
    // left to finish: the container died of SIGKILL while the build still ran, and was removed.
    expect(await ended).toEqual({ exitCode: '137', removed: true });
    expect((await containersOf(workerId)).map((c) => c.Id)).not.toContain(build.Id);
  });
});
