/**
 * The embedded Temporal default: find the `temporal` CLI and run `temporal server start-dev`
 * with a SQLite file under the data directory, the web UI, and the factory's search attributes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';

const PROJECT_ROOT = path.resolve(__dirname, '..', '..');
export const LOCAL_TEMPORAL_CLI = path.join(PROJECT_ROOT, '.tools', 'temporal', 'bin', 'temporal');

/** The CLI named in configuration, else the one on PATH, else the project-local install. */
export function resolveTemporalCli(configured?: string): string {
  if (configured) {
    if (!fs.existsSync(configured)) throw new Error(`temporal.cliPath=${configured} does not exist`);
    return configured;
  }
  const onPath = spawnSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8', timeout: 10_000 });
  if (onPath.status === 0 && onPath.stdout.trim()) return onPath.stdout.trim();
  if (fs.existsSync(LOCAL_TEMPORAL_CLI)) return LOCAL_TEMPORAL_CLI;
  throw new Error('no temporal CLI found: run `npm run setup` (installs it into .tools/) or put `temporal` on PATH');
}

export function portInUse(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface DevServerOptions {
  cli: string;
  port: number;
  uiPort?: number;
  /** SQLite file; omitted = in memory (tests). */
  dbFile?: string;
  namespace: string;
  logFile?: string;
  startTimeoutMs?: number;
}

export interface DevServer {
  address: string;
  uiUrl: string | null;
  /** False when another live command of this project started the server: it is used, not stopped. */
  owned: boolean;
  /** How it was found: started now, an orphan left by a killed command (now ours), or shared with a live command. */
  origin: 'started' | 'orphan' | 'shared';
  stop(): Promise<void>;
}

/** Written beside the database: which process runs the server and which command started it. */
interface ServerPidFile {
  pid: number;
  ownerPid: number;
  port: number;
  dbFile: string;
  startedAt: string;
}

export class ForeignServerError extends Error {
  override name = 'ForeignServerError';
}

function pidFileOf(dbFile: string): string {
  return `${dbFile}.pid`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readPidFile(dbFile: string): ServerPidFile | null {
  try {
    return JSON.parse(fs.readFileSync(pidFileOf(dbFile), 'utf8')) as ServerPidFile;
  } catch {
    return null;
  }
}

async function stopPid(pid: number, timeoutMs = 10000): Promise<void> {
  if (!alive(pid)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + timeoutMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) process.kill(pid, 'SIGKILL');
}

async function waitForFrontend(address: string, child: ChildProcess | null, timeoutMs: number, logFile?: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) {
      const tail = logFile && fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n') : '';
      throw new Error(`temporal server start-dev exited with code ${child.exitCode}\n${tail}`);
    }
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`Temporal at ${address} did not answer within ${timeoutMs} ms: ${String(lastError)}`);
}

/**
 * Starts `temporal server start-dev` on its database file. When the port is taken, the server is
 * used only if this project started it on the same database (its pid file says so): an orphan left
 * by a killed command is adopted (and stopped at the end), one of a live command is shared. Any
 * other program on the port is refused with a message: the embedded mode never silently works
 * against a foreign server.
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const address = `127.0.0.1:${options.port}`;
  const uiUrl = options.uiPort ? `http://localhost:${options.uiPort}` : null;
  if (await portInUse(options.port)) {
    const known = options.dbFile ? readPidFile(options.dbFile) : null;
    if (!known || known.port !== options.port || !alive(known.pid)) {
      throw new ForeignServerError(
        `port ${options.port} is taken by a program this project did not start on ${options.dbFile ?? 'its database'}: ` +
          `to use a Temporal server that is already running, set TEMPORAL_ADDRESS=${address}; ` +
          `to run the embedded server elsewhere, set REPOST_TEMPORAL_PORT (and REPOST_TEMPORAL_UI_PORT)`,
      );
    }
    await waitForFrontend(address, null, options.startTimeoutMs ?? 10000);
    if (alive(known.ownerPid) && known.ownerPid !== process.pid) {
      return { address, uiUrl, owned: false, origin: 'shared', stop: async () => undefined };
    }
    // The command that started it is gone: the server is ours now, and stopped when we end.
    fs.writeFileSync(pidFileOf(options.dbFile!), JSON.stringify({ ...known, ownerPid: process.pid }));
    return {
      address,
      uiUrl,
      owned: true,
      origin: 'orphan',
      stop: async () => {
        await stopPid(known.pid);
        fs.rmSync(pidFileOf(options.dbFile!), { force: true });
      },
    };
  }
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--namespace', options.namespace, '--log-level', 'warn'];
  if (options.uiPort) args.push('--ui-port', String(options.uiPort));
  else args.push('--headless');
  if (options.dbFile) {
    fs.mkdirSync(path.dirname(options.dbFile), { recursive: true });
    args.push('--db-filename', options.dbFile);
  }
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);
  // One partition per task queue: the server orders a backlog by priority within a partition, so
  // with one it is exact (later pipeline stages first); one machine's crawl does not need more.
  for (const key of ['matching.numTaskqueueReadPartitions', 'matching.numTaskqueueWritePartitions']) args.push('--dynamic-config-value', `${key}=1`);

  if (options.logFile) fs.mkdirSync(path.dirname(options.logFile), { recursive: true });
  const out = options.logFile ? fs.openSync(options.logFile, 'a') : 'ignore';
  const child = spawn(options.cli, args, { stdio: ['ignore', out, out], detached: false });
  if (typeof out === 'number') fs.closeSync(out);
  await waitForFrontend(address, child, options.startTimeoutMs ?? 60000, options.logFile);
  if (options.dbFile && child.pid) {
    const record: ServerPidFile = { pid: child.pid, ownerPid: process.pid, port: options.port, dbFile: options.dbFile, startedAt: new Date().toISOString() };
    fs.writeFileSync(pidFileOf(options.dbFile), JSON.stringify(record));
  }

  const stop = async () => {
    if (options.dbFile) fs.rmSync(pidFileOf(options.dbFile), { force: true });
    if (child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
    await exited;
    clearTimeout(timer);
  };
  return { address, uiUrl, owned: true, origin: 'started', stop };
}
