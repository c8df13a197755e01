/** Shared setup of the sandbox integration tests: the real image, the real Docker engine. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Docker from 'dockerode';
import { SandboxExecutor, type SandboxExecutorConfig } from '../../../activities/sandbox';
import { LABELS } from '../../../activities/sandbox/container-spec';
import { ensureSandboxImage } from '../../../sandbox-image/build';
import { ConfigSchema } from '../../../temporal.config';

export const docker = new Docker();

/** Small limits keep the hostile cases quick: a 10 GB allocation hits 512 MB at once. */
export function testConfig(overrides: Partial<SandboxExecutorConfig> = {}): SandboxExecutorConfig {
  const defaults = ConfigSchema.parse({}).sandbox;
  return {
    ...defaults,
    memoryMb: 512,
    pidsLimit: 128,
    timeoutSec: 20,
    scratchMb: 64,
    outputLimitBytes: 16 * 1024,
    ...overrides,
    pool: { ...defaults.pool, size: 1, recycleAfterRuns: 50, ...overrides.pool },
    packages: { ...defaults.packages, installTimeoutSec: 300, uvCacheDir: SHARED_UV_CACHE, ...overrides.packages },
    workerId: overrides.workerId ?? `test-${process.pid}`,
  };
}

/**
 * The package store the sandbox tests share across runs on a machine, so wheels (torch's
 * gigabytes included) are downloaded once per machine, not once per test run.
 */
export const SHARED_STORE = process.env.REPOST_TEST_PACKAGES_DIR ?? path.join(os.tmpdir(), 'repost-test-packages');
export const SHARED_UV_CACHE = path.join(SHARED_STORE, 'uv-cache');

/** An empty store (no environment, no built wheel) that reuses the shared uv cache for downloads. */
export function freshStore(prefix = 'repost-package-store-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function makeExecutor(
  mode: 'pool' | 'cold',
  overrides: Partial<SandboxExecutorConfig> = {},
  packagesDir: string = SHARED_STORE,
): Promise<SandboxExecutor> {
  const { tag } = await ensureSandboxImage({ docker });
  fs.mkdirSync(packagesDir, { recursive: true });
  return new SandboxExecutor(testConfig({ ...overrides, strict: mode === 'cold' }), { docker, image: tag, packagesDir });
}

/**
 * A warmed executor for the enclosing describe block: made and warmed before its tests, closed
 * after them, and checked to have left no container of `workerId` behind.
 */
export function warmExecutor(workerId: string, mode: 'pool' | 'cold' = 'pool', overrides: Partial<SandboxExecutorConfig> = {}): { readonly executor: SandboxExecutor } {
  let executor: SandboxExecutor | null = null;
  beforeAll(async () => {
    executor = await makeExecutor(mode, { workerId, ...overrides });
    await executor.warm();
  });
  afterAll(async () => {
    await executor?.close();
    expect(await containersOf(workerId)).toHaveLength(0);
  });
  return {
    get executor(): SandboxExecutor {
      if (!executor) throw new Error(`the executor of ${workerId} is made in beforeAll`);
      return executor;
    },
  };
}

/** Sandbox containers of one worker id, running or not. */
export async function containersOf(workerId: string): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`${LABELS.sandbox}=1`, `${LABELS.worker}=${workerId}`] } });
}

/** Processes inside a container other than its PID 1 (the reaper). */
export async function strayProcesses(containerId: string): Promise<string[]> {
  const top = (await docker.getContainer(containerId).top({ ps_args: '-o pid,user,args' })) as { Processes: string[][] };
  return top.Processes.map((p) => p.join(' ')).filter((line) => !line.includes('/opt/repost/harness/init.py'));
}

/**
 * The most processes any sandbox container of `workerId` held while `until` was pending, as the
 * container's cgroup counts them (Docker's stats), sampled as fast as Docker answers.
 */
export async function peakProcesses(workerId: string, until: Promise<unknown>): Promise<number> {
  let done = false;
  void until.finally(() => (done = true)).catch(() => undefined);
  let peak = 0;
  while (!done) {
    for (const c of await containersOf(workerId)) {
      if (c.State !== 'running') continue;
      try {
        const stats = (await docker.getContainer(c.Id).stats({ stream: false, 'one-shot': true } as never)) as unknown as { pids_stats?: { current?: number } };
        peak = Math.max(peak, stats.pids_stats?.current ?? 0);
      } catch {
        // The container went away (a cold run's end): the next sample finds the next one.
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return peak;
}

/**
 * How a container ends, from Docker's events: the exit code of its death (137 = SIGKILL) and
 * whether it was removed. Resolves once it is removed, or rejects after a minute.
 */
export async function containerEnd(containerId: string): Promise<{ exitCode: string | null; removed: boolean }> {
  const events = (await docker.getEvents({ filters: { container: [containerId], type: ['container'] } })) as NodeJS.ReadableStream & { destroy(): void };
  return new Promise((resolve, reject) => {
    let exitCode: string | null = null;
    const timer = setTimeout(() => {
      events.destroy();
      reject(new Error(`container ${containerId} was not removed within a minute`));
    }, 60_000);
    let buffered = '';
    events.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const e = JSON.parse(line) as { Action?: string; Actor?: { Attributes?: Record<string, string> } };
        if (e.Action === 'die') exitCode = e.Actor?.Attributes?.exitCode ?? null;
        if (e.Action === 'destroy') {
          clearTimeout(timer);
          events.destroy();
          resolve({ exitCode, removed: true });
        }
      }
    });
    events.on('error', reject);
  });
}

export async function waitFor(predicate: () => Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return predicate();
}
