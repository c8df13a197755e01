/**
 * The factory's commands run as a user runs them, each in a process of its own: `workers/main.ts`
 * and the scripts, through tsx, with an environment that holds only what the test gives them (no
 * REPOST_, TEMPORAL_ or OPENAI_ variable of the test process leaks in).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

export const PROJECT_ROOT = path.resolve(__dirname, '../..');
/** tsx's loader for both module systems (as `npx tsx` has it), by absolute URL so any cwd works. */
const TSX_ARGS = ['--import', pathToFileURL(path.join(PROJECT_ROOT, 'node_modules/tsx/dist/loader.mjs')).href];

/** This process's environment without the factory's own variables, plus `extra`. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(REPOST_|TEMPORAL_|OPENAI_|GITHUB_TOKEN)/.test(k)) env[k] = v;
  return { ...env, ...extra };
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `tsx <script> args` in `cwd` to its end. */
export function runScript(script: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...TSX_ARGS, path.join(PROJECT_ROOT, script), ...args], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
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

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  /** SIGTERM (the worker drains and exits), SIGKILL after a grace period. */
  stop(): Promise<void>;
}

/**
 * Starts `workers/main.ts --roles <roles>` and resolves once it polls (its "workers polling" line);
 * rejects with its output if it exits first.
 */
export function startWorkerProcess(roles: string, options: { cwd: string; env: NodeJS.ProcessEnv; readyTimeoutMs?: number }): Promise<WorkerProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...TSX_ARGS, path.join(PROJECT_ROOT, 'workers/main.ts'), '--roles', roles], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const handle: WorkerProcess = {
      child,
      output: () => out,
      async stop() {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(timer);
      },
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`worker --roles ${roles} did not start in time:\n${out}`));
    }, options.readyTimeoutMs ?? 180_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (/workers polling/.test(out)) {
        clearTimeout(timer);
        resolve(handle);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker --roles ${roles} exited with ${code} before polling:\n${out}`));
    });
  });
}
