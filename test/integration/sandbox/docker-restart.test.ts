/**
 * A Docker daemon restart mid-run, on a private daemon of this test's own (never the shared one):
 * the run in flight and the runs while the daemon is away end as `infrastructure` (which the
 * activity retries), and once it is back the executor recovers on its own: its dead pool
 * containers are discarded, new ones made, and runs pass again.
 */
import * as fs from 'node:fs';
import { SandboxExecutor } from '../../../activities/sandbox';
import { LABELS } from '../../../activities/sandbox/container-spec';
import { ensureSandboxImage } from '../../../sandbox-image/build';
import { docker as sharedDocker, freshStore, testConfig } from './sandbox-env';
import { PrivateDockerDaemon } from '../../support/private-docker';

const daemon = new PrivateDockerDaemon();
const privateDocker = daemon.docker;
const startDaemon = () => daemon.start();
const stopDaemon = () => daemon.stop();

describe('a Docker daemon restart', () => {
  let executor: SandboxExecutor;
  const workerId = `restart-${process.pid}`;
  const store = freshStore();

  beforeAll(async () => {
    const { tag } = await ensureSandboxImage({ docker: sharedDocker });
    await startDaemon();
    daemon.loadImage(tag);
    executor = new SandboxExecutor(testConfig({ workerId, pool: { enabled: true, size: 1, recycleAfterRuns: 50, maxAgeSec: 1800 } }), {
      docker: privateDocker,
      image: tag,
      packagesDir: store,
    });
    await executor.warm();
  }, 180_000);

  afterAll(async () => {
    await executor?.close().catch(() => undefined);
    await daemon.dispose();
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
