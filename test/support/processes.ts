/**
 * The factory's commands as a deployment runs them, each in its own OS process: worker processes
 * (`tsx workers/main.ts --roles ...`), which a test can kill for real (SIGKILL) and start again,
 * and the scripts, run to their end. A process may run from any folder (another machine's) and
 * with an environment that holds only what the test gives it (`cleanEnv`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

export const PROJECT_ROOT = path.resolve(__dirname, '..', '..');
/** tsx's require hook by absolute path, so a process started in any folder finds it. */
const TSX_ARGS = ['-r', require.resolve('tsx/cjs')];

/** This process's environment without the factory's own variables (REPOST_*, TEMPORAL_*, OPENAI_*, GITHUB_TOKEN), plus `extra`. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(REPOST_|TEMPORAL_|OPENAI_|GITHUB_TOKEN)/.test(k)) env[k] = v;
  return { ...env, ...extra };
}

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

export interface ProcessOptions {
  /** Working folder (default: the project root). */
  cwd?: string;
  /** The whole environment (default: this process's, with `env` laid over it). */
  exactEnv?: boolean;
}

export function spawnWorker(env: NodeJS.ProcessEnv, roles?: string[], options: ProcessOptions = {}): WorkerProcess {
  const args = [...TSX_ARGS, path.join(PROJECT_ROOT, 'workers/main.ts'), ...(roles ? ['--roles', roles.join(',')] : [])];
  const child = spawn(process.execPath, args, { cwd: options.cwd ?? PROJECT_ROOT, env: options.exactEnv ? env : { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `tsx <script> args` to its end (SIGKILL after `timeoutMs`). */
export function runScript(script: string, args: string[], options: ProcessOptions & { env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const env = options.exactEnv ? options.env : { ...process.env, ...options.env };
    const child = spawn(process.execPath, [...TSX_ARGS, path.join(PROJECT_ROOT, script), ...args], { cwd: options.cwd ?? PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 240_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
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
