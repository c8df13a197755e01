/**
 * `scripts/serve.ts` in its own process for integration tests, and a JSON POST to it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { requireEnv } from './factory';

const ROOT = path.resolve(__dirname, '../..');

export interface Served {
  url: string;
  child: ChildProcess;
  workerPrefix: string;
  output: () => string;
  stop: () => Promise<void>;
}

/** Starts `scripts/serve.ts` with the flags, on a free port; resolves once it listens. `env` is added to the process's environment. */
export async function startServe(args: string[], dataDir: string, env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, ['-r', require.resolve('tsx/cjs'), path.join(ROOT, 'scripts/serve.ts'), '--port', '0', ...args], {
    cwd: ROOT,
    env: { ...process.env, REPOST_DATA_DIR: dataDir, REPOST_SANDBOX_IMAGE: requireEnv('REPOST_TEST_SANDBOX_IMAGE'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const m = /serve: listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve.ts exited (${code}) before it listened:\n${out}`)));
  });
  return {
    url,
    child,
    workerPrefix: `${os.hostname()}-${child.pid}`,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; json: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = { raw: text };
  }
  return { status: res.status, headers: res.headers, json };
}
