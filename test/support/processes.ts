/**
 * Worker processes as a deployment runs them (`tsx workers/main.ts --roles ...`), each in its
 * own OS process, so a test can kill one for real (SIGKILL) and start another.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

export const PROJECT_ROOT = path.resolve(__dirname, '..', '..');

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** Resolves once the process says it polls its queues; rejects if it exits first. */
  ready: Promise<void>;
  /** SIGKILL: the process dies at once, with whatever it was doing. */
  kill9(): Promise<void>;
  /** SIGTERM and wait for a graceful exit. */
  stop(): Promise<void>;
}

export function spawnWorker(env: NodeJS.ProcessEnv, roles?: string[]): WorkerProcess {
  const args = ['-r', 'tsx/cjs', 'workers/main.ts', ...(roles ? ['--roles', roles.join(',')] : [])];
  const child = spawn(process.execPath, args, { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    const check = () => {
      if (/workers polling/.test(out)) resolve();
    };
    child.stdout!.on('data', check);
    child.once('exit', (code, signal) => reject(new Error(`worker exited (${code ?? signal}) before it was ready:\n${out}`)));
  });
  ready.catch(() => undefined);
  return {
    child,
    output: () => out,
    ready,
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 120_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
