/**
 * The verification server through a Docker daemon restart, on a private daemon of this test's own
 * (never the shared one): `scripts/serve.ts` talks to it (DOCKER_HOST), verifies once, then the
 * daemon stops. The server notices by itself (its probe pings every 2 s): /health answers 503 and
 * /verify 503 with Retry-After, without running anything. Once the daemon is back the same server
 * process (not restarted) answers /health 200 and verifies the ground truth with reward 1 again.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fenced } from '../support/eval-scripts';
import { requireEnv } from '../support/factory';
import { DEMO_DATASET } from '../support/fixtures';
import { PrivateDockerDaemon } from '../support/private-docker';
import { waitFor } from '../support/processes';
import { post, startServe, type Served } from '../support/serve-process';

const words = fs
  .readFileSync(DEMO_DATASET, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as { function_id: string; qualname: string; orig_func: string })
  .find((r) => r.qualname === 'word_frequencies')!;

describe('the verification server through a Docker daemon restart', () => {
  const daemon = new PrivateDockerDaemon();
  let dataDir: string;
  let served: Served | undefined;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-serve-restart-'));
    await daemon.start();
    daemon.loadImage(requireEnv('REPOST_TEST_SANDBOX_IMAGE'));
  }, 180_000);

  afterAll(async () => {
    await served?.stop();
    await daemon.dispose();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);

  test('answers 503 while the daemon is away and reward 1 once it is back, in the same process', async () => {
    served = await startServe(['--dataset', `demo=${DEMO_DATASET}`, '--pool-size', '1'], dataDir, { DOCKER_HOST: daemon.host });
    const url = served.url;
    const verify = () => post(`${url}/verify`, { dataset: 'demo', id: words.function_id, completion: fenced(words.orig_func) });
    const health = async () => {
      const res = await fetch(`${url}/health`);
      return { status: res.status, json: (await res.json()) as { status: string } };
    };

    const before = await verify();
    expect(before.status).toBe(200);
    expect(before.json).toMatchObject({ reward: 1, passed: true });
    expect(await health()).toMatchObject({ status: 200, json: { status: 'ok' } });

    await daemon.stop();
    // No request has failed yet: the server finds out from its own probe, or from /health's ping.
    await waitFor('/health to report the engine down', async () => (await health()).status === 503, 30_000);
    expect((await health()).json).toMatchObject({ status: 'down' });
    const refused = await verify();
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const metrics = await (await fetch(`${url}/metrics`)).json();
    expect(metrics.pool.state).toBe('down');

    await daemon.start();
    await waitFor('/health to report the engine back', async () => (await health()).status === 200, 60_000);
    const after = await verify();
    expect(after.status).toBe(200);
    expect(after.json).toMatchObject({ reward: 1, passed: true });
    expect((await verify()).json).toMatchObject({ reward: 1, passed: true });
    expect(served.child.exitCode).toBeNull();
    expect(served.output()).toMatch(/the container engine does not answer/);
    expect(served.output()).toMatch(/the container engine answers again/);
  }, 300_000);
});
