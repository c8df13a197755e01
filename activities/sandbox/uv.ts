/**
 * uv (PyPI `uv`, one static binary) is the only thing that touches the network for packages:
 * it resolves and downloads wheels on the host, for the sandbox image's Python and platform,
 * and never builds a source distribution (`--no-build`), so no package code runs here.
 *
 * It gets an environment with nothing but what it needs: PATH (uv asks a host interpreter for an
 * install scheme, never to run package code), its cache, the CA bundle and proxy settings to
 * reach the index. No API keys, no Docker socket variables, no user configuration files.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BoundedOutput } from './bounded-output';

/** Where `scripts/bootstrap.sh` installs the pinned uv when none is configured. */
export const BUNDLED_UV = path.resolve(__dirname, '..', '..', '.tools', 'uv', 'bin', 'uv');

/** The configured binary, else the one bootstrap installed, else `uv` on PATH. */
export function resolveUvBinary(configured?: string): string {
  if (configured) return configured;
  return fs.existsSync(BUNDLED_UV) ? BUNDLED_UV : 'uv';
}

const PASSED_THROUGH = ['PATH', 'SSL_CERT_DIR', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'all_proxy'];

/** The CA bundle the host trusts (hosts behind an intercepting proxy add their CA to it). */
export function hostCaBundle(env: NodeJS.ProcessEnv = process.env): string | null {
  for (const candidate of [env.SSL_CERT_FILE, env.PIP_CERT, env.REQUESTS_CA_BUNDLE, env.NODE_EXTRA_CA_CERTS, '/etc/ssl/certs/ca-certificates.crt']) {
    if (candidate && fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return null;
}

export function uvEnvironment(args: { cacheDir: string; home: string; env?: NodeJS.ProcessEnv }): NodeJS.ProcessEnv {
  const source = args.env ?? process.env;
  const env: NodeJS.ProcessEnv = {};
  for (const name of PASSED_THROUGH) if (source[name]) env[name] = source[name];
  const ca = hostCaBundle(source);
  if (ca) env.SSL_CERT_FILE = ca;
  return {
    ...env,
    HOME: args.home,
    UV_CACHE_DIR: args.cacheDir,
    UV_NO_CONFIG: '1',
    UV_PYTHON_DOWNLOADS: 'never',
    UV_NO_PROGRESS: '1',
    NO_COLOR: '1',
  };
}

export interface UvOutcome {
  /** How the process ended: its own exit, or killed at the time limit or by cancellation. */
  ended: 'exit' | 'timeout' | 'cancelled' | 'spawn-error';
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface UvRunOptions {
  env: NodeJS.ProcessEnv;
  stdin?: string;
  /** Absolute deadline (ms since epoch): the process group is killed then. */
  deadline: number;
  signal?: AbortSignal;
  /** Called with every line uv prints on stderr (progress: `Downloading torch (539.0MiB)`). */
  onLine?: (line: string) => void;
}

/** Runs uv in its own process group, so a time limit or a cancellation kills everything it started. */
export function runUv(binary: string, args: string[], options: UvRunOptions): Promise<UvOutcome> {
  return new Promise((resolve) => {
    if (options.signal?.aborted) return resolve({ ended: 'cancelled', code: null, stdout: '', stderr: '' });
    const child = spawn(binary, args, { env: options.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const stdout = new BoundedOutput(1024 * 1024);
    const stderr = new BoundedOutput(256 * 1024);
    let ended: UvOutcome['ended'] = 'exit';
    let partial = '';
    const kill = (why: UvOutcome['ended']) => {
      if (ended !== 'exit') return;
      ended = why;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => kill('timeout'), Math.max(0, options.deadline - Date.now()));
    const onAbort = () => kill('cancelled');
    options.signal?.addEventListener('abort', onAbort);
    child.stdout.on('data', (d: Buffer) => stdout.push(d));
    child.stderr.on('data', (d: Buffer) => {
      stderr.push(d);
      if (!options.onLine) return;
      const lines = (partial + d.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) options.onLine(line);
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
    let finished = false;
    const finish = (code: number | null, spawnError?: Error) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({
        ended: spawnError ? 'spawn-error' : ended,
        code,
        stdout: stdout.toString(),
        stderr: spawnError ? `${spawnError.message}` : stderr.toString(),
      });
    };
    child.on('error', (err) => finish(null, err));
    child.on('close', (code) => finish(code));
  });
}
