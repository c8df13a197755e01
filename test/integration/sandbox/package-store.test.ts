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
import { makeSdist, writeTarball } from './local-sdist';

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

  test('a member named like a tar option is data: the archive is refused with the reason, nothing runs on the host', async () => {
    // Host `tar -xOf ARCHIVE MEMBER` would take this name for an option and run the shell command
    // (in the worker's folder, with its environment). Read in-process, it is only a name.
    const marker = `repost-owned-${process.pid}`;
    const evil = `--use-compress-program=sh -c 'echo owned > ${marker}' a/pyproject.toml`;
    const setupPy = 'from setuptools import setup\nsetup(name="repost-tarname", version="1.0")\n';
    writeTarball(links, 'repost-tarname-1.0.tar.gz', [
      { name: evil, body: '[build-system]\nrequires = ["setuptools"]\n' },
      { name: 'repost-tarname-1.0/setup.py', body: setupPy },
      { name: 'repost-tarname-1.0/PKG-INFO', body: 'Metadata-Version: 1.0\nName: repost-tarname\nVersion: 1.0\n' },
    ]);
    const s = store({ findLinks: [links] });
    const r = await s.ensure(['repost-tarname']);
    expect(r).toMatchObject({ ok: false, failure: { kind: 'build-failed', packages: ['repost-tarname'] } });
    if (!r.ok) {
      expect(r.failure.message).toMatch(/source archive of repost-tarname 1\.0 \(repost-tarname-1\.0\.tar\.gz\) is refused: its top folder "--use-compress-program=sh -c 'echo owned > repost-owned-\d+' a" is not repost-tarname-1\.0\//);
    }
    for (const where of [process.cwd(), os.tmpdir(), s.root, links]) expect(fs.existsSync(path.join(where, marker))).toBe(false);
  });

  test('a hostile build: only its one right wheel reaches the wheelhouse; the worker keeps heartbeating', async () => {
    // Its setup.py leaves, beside its own wheel: a wheel of six 99.0 (which would beat PyPI's six
    // in every later resolution), a link to a file, a FIFO named like a wheel, a 2 GB file named
    // like one of its own wheels, and it tries to fill the output folder.
    const setupPy = [
      'import os, zipfile',
      'from setuptools import setup',
      'out = "/opt/repost/build-output"',
      'def once(name, make):',
      '    if not os.path.lexists(os.path.join(out, name)):',
      '        make(os.path.join(out, name))',
      'def six_wheel(path):',
      '    with zipfile.ZipFile(path, "w") as z:',
      '        z.writestr("six.py", "POISONED = True\\n__version__ = \'99.0\'\\n")',
      '        z.writestr("six-99.0.dist-info/METADATA", "Metadata-Version: 2.1\\nName: six\\nVersion: 99.0\\n")',
      '        z.writestr("six-99.0.dist-info/WHEEL", "Wheel-Version: 1.0\\nGenerator: x\\nRoot-Is-Purelib: true\\nTag: py2-none-any\\nTag: py3-none-any\\n")',
      '        z.writestr("six-99.0.dist-info/RECORD", "")',
      'once("six-99.0-py2.py3-none-any.whl", six_wheel)',
      'once("passwd.whl", lambda p: os.symlink("/etc/passwd", p))',
      'once("fifo.whl", os.mkfifo)',
      'written = 0',
      'try:',
      '    with open(os.path.join(out, "fill.bin"), "wb") as f:',
      '        while written < 2 * 1024 ** 3:',
      '            f.write(b"\\0" * (1 << 20))',
      '            f.flush()',
      '            written += 1 << 20',
      'except OSError:',
      '    pass',
      'os.unlink(os.path.join(out, "fill.bin"))',
      'def huge(path):',
      '    with open(path, "wb") as f:',
      '        f.truncate(2 * 1024 ** 3)',
      'once("repost_poison-1.0-py2-none-any.whl", huge)',
      'os.makedirs("repost_poison", exist_ok=True)',
      'open("repost_poison/__init__.py", "w").write("FILLED = %d\\n" % written)',
      'setup(name="repost-poison", version="1.0", packages=["repost_poison"])',
      '',
    ].join('\n');
    makeSdist(links, 'repost-poison', '1.0', setupPy);
    const root = freshStore();
    roots.push(root);
    const scratchMb = testConfig().scratchMb;
    const executor = await makeExecutor('pool', { workerId: `poison-${process.pid}`, packages: { ...testConfig().packages, findLinks: [links] } }, root);
    let beats = 0;
    try {
      const result = await executor.run(
        { script: 'import repost_poison, six\nprint(repost_poison.FILLED, six.__version__, hasattr(six, "POISONED"))\n', install: true },
        { heartbeat: () => (beats += 1) },
      );
      expect(result.stderr).toBe('');
      expect(result.status).toBe('passed');
      const [filled, sixVersion, poisoned] = result.stdout.trim().split(' ');
      // The output folder is a tmpfs of scratchMb: filling it stopped there.
      expect(Number(filled)).toBeGreaterThan(0);
      expect(Number(filled)).toBeLessThanOrEqual(scratchMb * 1024 * 1024);
      expect(sixVersion).not.toBe('99.0');
      expect(poisoned).toBe('False');
      expect(fs.readdirSync(path.join(root, 'wheelhouse'))).toEqual(['repost_poison-1.0-py3-none-any.whl']);
      const notes = result.notes.join('\n');
      expect(notes).toMatch(/"six-99\.0-py2\.py3-none-any\.whl": a wheel of six 99\.0, not of repost-poison 1\.0: refused/);
      expect(notes).toMatch(/"passwd\.whl": a symlink, not a regular file: refused/);
      expect(notes).toMatch(/"fifo\.whl": a fifo, not a regular file: refused/);
      expect(notes).toMatch(/"repost_poison-1\.0-py2-none-any\.whl": 2147483648 bytes, more than the \d+ a build may hand over: refused/);
      expect(beats).toBeGreaterThan(0);
      // A later resolution in this store gets the index's six, not the build's.
      const later = await executor.packages.ensure(['six']);
      if (!later.ok) throw new Error(later.error);
      expect(later.set.packages).toEqual([{ name: 'six', version: sixVersion }]);
    } finally {
      await executor.close();
    }
  });

  test("a wheel shipping the store's manifest name cannot change other environments", async () => {
    // An in-tree build backend writes the wheel itself, with a top-level .repost-packages.json.
    const backend = [
      'import base64, hashlib, os, zipfile',
      'NAME = "repost_manifest-1.0-py3-none-any.whl"',
      'FILES = {',
      '    "repost_manifest.py": "X = 1\\n",',
      '    ".repost-packages.json": "{\\"planted\\": true}\\n",',
      '    "repost_manifest-1.0.dist-info/METADATA": "Metadata-Version: 2.1\\nName: repost-manifest\\nVersion: 1.0\\n",',
      '    "repost_manifest-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",',
      '}',
      'def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):',
      '    record = []',
      '    with zipfile.ZipFile(os.path.join(wheel_directory, NAME), "w") as z:',
      '        for name, text in FILES.items():',
      '            data = text.encode()',
      '            z.writestr(name, data)',
      '            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()',
      '            record.append(f"{name},sha256={digest},{len(data)}")',
      '        record.append("repost_manifest-1.0.dist-info/RECORD,,")',
      '        z.writestr("repost_manifest-1.0.dist-info/RECORD", "\\n".join(record) + "\\n")',
      '    return NAME',
      '',
    ].join('\n');
    writeTarball(links, 'repost-manifest-1.0.tar.gz', [
      { name: 'repost-manifest-1.0/pyproject.toml', body: '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n' },
      { name: 'repost-manifest-1.0/backend.py', body: backend },
      { name: 'repost-manifest-1.0/PKG-INFO', body: 'Metadata-Version: 2.1\nName: repost-manifest\nVersion: 1.0\n' },
    ]);
    const s = store({ findLinks: [links] });
    const one = await s.ensure(['repost-manifest']);
    if (!one.ok) throw new Error(one.error);
    const two = await s.ensure(['repost-manifest', 'six']);
    if (!two.ok) throw new Error(two.error);
    // The wheel's files are shared (hard links into uv's cache); the store's manifest is each set's own.
    expect(fs.statSync(path.join(two.set.hostPath, 'repost_manifest.py')).ino).toBe(fs.statSync(path.join(one.set.hostPath, 'repost_manifest.py')).ino);
    const manifestOf = (dir: string) => path.join(dir, '.repost-packages.json');
    expect(fs.statSync(manifestOf(two.set.hostPath)).ino).not.toBe(fs.statSync(manifestOf(one.set.hostPath)).ino);
    expect(s.lookup(['repost-manifest'])?.requirements).toEqual(['repost-manifest']);
    expect(s.lookup(['repost-manifest', 'six'])?.requirements).toEqual(['repost-manifest', 'six']);
    expect(JSON.parse(fs.readFileSync(manifestOf(one.set.hostPath), 'utf8')).requirements).toEqual(['repost-manifest']);
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
    // The container where `pip wheel` runs, not one that byte-compiled the build requirements.
    const building = async () => {
      for (const c of await containersOf(workerId)) {
        if (c.State !== 'running') continue;
        const top = (await docker.getContainer(c.Id).top({ ps_args: '-o pid,args' }).catch(() => ({ Processes: [] }))) as { Processes: string[][] | null };
        if ((top.Processes ?? []).some((p) => p.join(' ').includes('pip wheel'))) return c;
      }
      return undefined;
    };
    expect(await waitFor(async () => (await building()) !== undefined, 60_000)).toBe(true);
    const build = (await building())!;
    const ended = containerEnd(build.Id);
    controller.abort();
    expect(await pending).toMatchObject({ ok: false, failure: { kind: 'cancelled' } });
    // The build (a 120 s sleep, under a 300 s install limit) was stopped by the cancellation, not
    // left to finish: its container died of SIGKILL while the build still ran, and was removed.
    expect(await ended).toEqual({ exitCode: '137', removed: true });
    expect((await containersOf(workerId)).map((c) => c.Id)).not.toContain(build.Id);
  });
});
