/**
 * A Docker daemon restart mid-run, on a private daemon of this test's own (never the shared one):
 * the run in flight and the runs while the daemon is away end as `infrastructure` (which the
 * activity retries), and once it is back the executor recovers on its own: its dead pool
 * containers are discarded, new ones made, and runs pass again.
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Docker from 'dockerode';
import { SandboxExecutor } from '../../../activities/sandbox';
import { LABELS } from '../../../activities/sandbox/container-spec';
import { ensureSandboxImage } from '../../../sandbox-image/build';
import { docker as sharedDocker, freshStore, testConfig, waitFor } from './sandbox-env';

// Short paths: the daemon's sockets live under them and socket paths are limited to 108 bytes.
const dir = fs.mkdtempSync('/tmp/repost-dockerd-');
const socket = path.join(dir, 'd.sock');
const privateDocker = new Docker({ socketPath: socket });
let daemon: ChildProcess | null = null;

async function startDaemon(): Promise<void> {
  const log = fs.openSync(path.join(dir, 'dockerd.log'), 'a');
  daemon = spawn(
    'dockerd',
    ['--host', `unix://${socket}`, '--data-root', path.join(dir, 'root'), '--exec-root', path.join(dir, 'x'), '--pidfile', path.join(dir, 'd.pid'),
      '--bridge=none', '--iptables=false', '--ip6tables=false'],
    { stdio: ['ignore', log, log] },
  );
  fs.closeSync(log);
  const up = await waitFor(() => privateDocker.ping().then(() => true, () => false), 60_000);
  if (!up) throw new Error(`the private dockerd did not start: ${fs.readFileSync(path.join(dir, 'dockerd.log'), 'utf8').slice(-2000)}`);
}

async function stopDaemon(): Promise<void> {
  const d = daemon;
  daemon = null;
  if (!d || d.exitCode !== null) return;
  const exited = new Promise((r) => d.once('exit', r));
  d.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
  if (d.exitCode === null) d.kill('SIGKILL');
}

describe('a Docker daemon restart', () => {
  let executor: SandboxExecutor;
  const workerId = `restart-${process.pid}`;
  const store = freshStore();

  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error('this test starts a private dockerd and must run as root');
    const { tag } = await ensureSandboxImage({ docker: sharedDocker });
    await startDaemon();
    execSync(`docker save ${tag} | docker -H unix://${socket} load`, { stdio: 'ignore', shell: '/bin/bash' });
    executor = new SandboxExecutor(testConfig({ workerId, pool: { enabled: true, size: 1, recycleAfterRuns: 50, maxAgeSec: 1800 } }), {
      docker: privateDocker,
      image: tag,
      packagesDir: store,
    });
    await executor.warm();
  }, 180_000);

  afterAll(async () => {
    await executor?.close().catch(() => undefined);
    await stopDaemon();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(store, { recursive: true, force: true });
  }, 120_000);

  test('ends in-flight runs as infrastructure, and the executor recovers once the daemon is back', async () => {
    expect((await executor.run({ script: 'print("before")' })).status).toBe('passed');

    const inFlight = executor.run({ script: 'import time\ntime.sleep(20)\nprint("done")\n', timeoutSec: 60 });
    await new Promise((r) => setTimeout(r, 1500));
    await stopDaemon();
    const lost = await inFlight;
    expect(lost.status).toBe('infrastructure');

    const whileDown = await executor.run({ script: 'print("down")' });
    expect(whileDown.status).toBe('infrastructure');
    expect(whileDown.notes.join('\n')).toMatch(/ENOENT|ECONNREFUSED|socket/);

    await startDaemon();
    const after = await executor.run({ script: 'print("after")' });
    expect(after.status).toBe('passed');
    expect(after.stdout).toBe('after\n');
    expect((await executor.run({ script: 'print("again")' })).status).toBe('passed');

    // The containers the restart stopped are swept; only the pool's live one is left.
    await executor.cleanupLeftovers();
    const left = await privateDocker.listContainers({ all: true, filters: { label: [`${LABELS.worker}=${workerId}`] } });
    expect(left.map((c) => c.State)).toEqual(['running']);
  }, 240_000);
});
