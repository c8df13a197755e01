/**
 * A throwaway PostgreSQL server, for tests (like the Temporal dev server): `initdb` into a fresh
 * folder, `pg_ctl start` on a loopback port with trust authentication, `pg_ctl stop` and the folder
 * removed at the end. The server binaries come from PATH, else from Debian's
 * `/usr/lib/postgresql/<version>/bin` (`scripts/bootstrap.sh --tests` installs them when neither
 * exists). PostgreSQL refuses to run as root: as root the server runs as `nobody`, in a folder
 * `nobody` owns.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from './temporal-server';

const DEBIAN_ROOT = '/usr/lib/postgresql';
/** The unprivileged account the server runs as when this process is root. */
const SERVER_USER_WHEN_ROOT = 'nobody';
/** The superuser `initdb` creates; trust authentication, so no password. */
const SUPERUSER = 'repost';
/** The longest one server command may take (`pg_ctl` itself waits at most 60 s); killed then. */
const COMMAND_TIMEOUT_MS = 120_000;

/** The folder holding `initdb`, `pg_ctl` and `postgres`: PATH first, then Debian's newest version. */
export function findPostgresBin(): string {
  const onPath = spawnSync('sh', ['-c', 'command -v pg_ctl && command -v initdb && command -v postgres'], { encoding: 'utf8', timeout: COMMAND_TIMEOUT_MS });
  if (onPath.status === 0) {
    const dirs = new Set(onPath.stdout.trim().split('\n').map((p) => path.dirname(fs.realpathSync(p))));
    if (dirs.size === 1) return [...dirs][0]!;
  }
  const versions = fs.existsSync(DEBIAN_ROOT)
    ? fs
        .readdirSync(DEBIAN_ROOT)
        .filter((v) => /^\d+$/.test(v) && fs.existsSync(path.join(DEBIAN_ROOT, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0]) return path.join(DEBIAN_ROOT, versions[0], 'bin');
  throw new Error('no PostgreSQL server binaries (initdb, pg_ctl, postgres) on PATH or under /usr/lib/postgresql: run `bash scripts/bootstrap.sh --tests` (as root on Debian it installs postgresql)');
}

export interface PostgresServer {
  /** `postgres://repost@127.0.0.1:<port>/postgres` (the maintenance database; create your own in it). */
  url: string;
  port: number;
  dataDir: string;
  /** Stops the server at once (as a crash would), runs `whileDown`, and starts it again on the same data and port. */
  restart(whileDown?: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

function asServerUser(command: string[], root: boolean): { cmd: string; args: string[] } {
  return root ? { cmd: 'runuser', args: ['-u', SERVER_USER_WHEN_ROOT, '--', ...command] } : { cmd: command[0]!, args: command.slice(1) };
}

function run(command: string[], root: boolean, what: string, logFile?: string): void {
  const { cmd, args } = asServerUser(command, root);
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C', LANG: 'C' }, timeout: COMMAND_TIMEOUT_MS, killSignal: 'SIGKILL' });
  if (r.status !== 0) {
    const log = logFile && fs.existsSync(logFile) ? `\n${fs.readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n')}` : '';
    throw new Error(`${what} failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr || r.stdout).trim().slice(-2000)}${log}`);
  }
}

export async function startPostgresServer(options: { bin?: string; port?: number } = {}): Promise<PostgresServer> {
  const bin = options.bin ?? findPostgresBin();
  const root = process.getuid?.() === 0;
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-pg-'));
  const dataDir = path.join(base, 'data');
  const logFile = path.join(base, 'server.log');
  if (root) {
    // The folder and everything the server writes belong to the unprivileged user.
    const id = spawnSync('id', ['-u', SERVER_USER_WHEN_ROOT], { encoding: 'utf8', timeout: COMMAND_TIMEOUT_MS });
    const gid = spawnSync('id', ['-g', SERVER_USER_WHEN_ROOT], { encoding: 'utf8', timeout: COMMAND_TIMEOUT_MS });
    if (id.status !== 0) throw new Error(`running as root, and there is no user ${SERVER_USER_WHEN_ROOT} to run PostgreSQL as`);
    fs.chownSync(base, Number(id.stdout.trim()), Number(gid.stdout.trim()));
  }
  const port = options.port ?? (await freePort());
  // No fsync (a throwaway server need not survive the machine), but commits are written before
  // they return, so a killed server loses nothing (tests stop it as a crash would).
  const serverOptions = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${base}`,
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c shared_buffers=32MB',
    '-c max_connections=200',
  ].join(' ');
  const start = () => run([path.join(bin, 'pg_ctl'), '-D', dataDir, '-l', logFile, '-o', serverOptions, '-w', '-t', '60', 'start'], root, 'pg_ctl start', logFile);
  const stopNow = () => run([path.join(bin, 'pg_ctl'), '-D', dataDir, '-m', 'immediate', '-w', '-t', '60', 'stop'], root, 'pg_ctl stop');
  try {
    run([path.join(bin, 'initdb'), '-D', dataDir, '-U', SUPERUSER, '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'], root, 'initdb');
    start();
  } catch (err) {
    fs.rmSync(base, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `postgres://${SUPERUSER}@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    async restart(whileDown) {
      stopNow();
      try {
        await whileDown?.();
      } finally {
        start();
      }
    },
    async stop() {
      try {
        stopNow();
      } finally {
        fs.rmSync(base, { recursive: true, force: true });
      }
    },
  };
}
