/**
 * Repository snapshots as folders under the data directory: a tree at a pinned commit, stored once
 * and reused by every later analysis of that commit (`<root>/<owner>/<name>/<commit>/tree` for a
 * GitHub-shaped id, `<root>/_other/<name>/<commit>/tree` for any other, with a manifest beside
 * it). Trees enter atomically (built aside, then renamed into place), so a reader
 * sees no snapshot or a complete one. The local store keeps its snapshots here; the PostgreSQL
 * store keeps their archives (`packTree`) and materialises them here on demand.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { safeName } from './names';

/** An extracted tree on disk, immutable once written, keyed by repository and commit. */
export interface Snapshot {
  repoId: string;
  commit: string;
  /** Absolute path of the extracted tree. */
  dir: string;
  files: number;
  pythonFiles: number;
  bytes: number;
  /** sha256 of the tarball the tree came from (GitHub snapshots). */
  tarballSha256: string | null;
  /** Whether the snapshot already existed and was reused. */
  reused: boolean;
}

export interface Manifest {
  repoId: string;
  commit: string;
  files: number;
  pythonFiles: number;
  bytes: number;
  tarballSha256: string | null;
}

const IGNORED = new Set(['.git', '.hg', '.svn', 'node_modules', '__pycache__', '.tox', '.venv', 'venv', '.mypy_cache', '.pytest_cache']);

interface TreeStats {
  hash: string;
  files: number;
  pythonFiles: number;
  bytes: number;
}

/** Content hash of a tree: sorted relative paths with the sha256 of each file (symlinks by target text). */
export async function hashTree(root: string): Promise<TreeStats> {
  const h = createHash('sha256');
  let files = 0;
  let pythonFiles = 0;
  let bytes = 0;
  async function walk(dir: string, rel: string): Promise<void> {
    const entries = (await fs.readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const abs = path.join(dir, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!IGNORED.has(e.name)) await walk(abs, r);
      } else if (e.isSymbolicLink()) {
        h.update(`L ${r} -> ${await fs.readlink(abs)}\n`);
      } else if (e.isFile()) {
        const data = await fs.readFile(abs);
        files++;
        bytes += data.length;
        if (e.name.endsWith('.py')) pythonFiles++;
        h.update(`F ${r} ${createHash('sha256').update(data).digest('hex')}\n`);
      }
    }
  }
  await walk(root, '');
  return { hash: h.digest('hex'), files, pythonFiles, bytes };
}

/** Version-control folders never enter a snapshot. */
const VCS_FOLDERS = ['.git', '.hg', '.svn'];

/**
 * The longest one `tar` may run (packing, unpacking or extracting a snapshot of at most a few
 * hundred MB): it is killed then, and the operation fails saying so.
 */
export const TAR_TIMEOUT_MS = 10 * 60_000;

/**
 * `tar` with fixed arguments (never a name from an archive or a repository) and a time limit; its
 * exit, as a promise that never rejects (how it ended is for the caller to judge).
 */
export function spawnTar(args: string[], stdio: ['pipe' | 'ignore', 'pipe' | 'ignore', 'pipe'], timeoutMs: number) {
  const child = spawn('tar', args, { stdio, timeout: timeoutMs, killSignal: 'SIGKILL' });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; error: Error | null }>((resolve) => {
    child.on('error', (error) => resolve({ code: null, error }));
    child.on('close', (code) => resolve({ code, error: null }));
  });
  /** Why tar failed, in a sentence, or null when it succeeded. */
  const failure = async (what: string): Promise<string | null> => {
    const { code, error } = await exited;
    if (code === 0) return null;
    if (error) return `tar could not ${what}: ${error.message}`;
    if (child.killed && code === null) return `tar could not ${what}: it did not finish within ${Number((timeoutMs / 1000).toFixed(3))} s and was stopped`;
    return `tar could not ${what} (exit ${code}): ${stderr.trim().slice(0, 500)}`;
  };
  return { child, exited, failure };
}

/**
 * A tree as a gzipped tar stream (symlinks kept as links, VCS folders left out), yielded in
 * chunks as `tar` writes them, so a large tree never sits in memory whole.
 */
export async function* packTree(dir: string, timeoutMs = TAR_TIMEOUT_MS): AsyncIterable<Buffer> {
  const tar = spawnTar(['-c', '-z', '-f', '-', '-C', path.resolve(dir), ...VCS_FOLDERS.map((f) => `--exclude=${f}`), '.'], ['ignore', 'pipe', 'pipe'], timeoutMs);
  try {
    for await (const chunk of tar.child.stdout!) yield chunk as Buffer;
    const failed = await tar.failure(`pack ${dir}`);
    if (failed) throw new Error(failed);
  } finally {
    if (tar.child.exitCode === null) tar.child.kill('SIGKILL');
  }
}

/**
 * Unpacks `packTree`'s stream into `dest` (created), feeding `tar` chunk by chunk. A stream that
 * stops arriving does not hold it past its time limit.
 */
export async function unpackTree(chunks: AsyncIterable<Buffer>, dest: string, timeoutMs = TAR_TIMEOUT_MS): Promise<void> {
  await fs.mkdir(dest, { recursive: true });
  const tar = spawnTar(['-x', '-z', '-f', '-', '-C', path.resolve(dest), '--no-same-owner', '--no-same-permissions'], ['pipe', 'ignore', 'pipe'], timeoutMs);
  const stdin = tar.child.stdin!;
  stdin.on('error', () => undefined);
  const ended = tar.exited.then(() => null);
  const source = chunks[Symbol.asyncIterator]();
  try {
    for (;;) {
      // Whichever comes first: the next chunk, or tar's end (a broken archive, the time limit).
      const next = await Promise.race([source.next(), ended]);
      if (next === null || next.done) break;
      // Wait for tar to take more, or to have stopped: never for a drain that cannot come.
      if (!stdin.write(next.value)) await Promise.race([new Promise((resolve) => stdin.once('drain', resolve)), ended]);
    }
  } finally {
    stdin.end();
    // A source still waiting for its next chunk is told to stop; it is not waited for.
    if (tar.child.exitCode !== null || tar.child.killed) void source.return?.()?.catch(() => undefined);
  }
  const failed = await tar.failure('unpack the snapshot archive');
  if (failed) throw new Error(failed);
}

/** A git commit (40 or 64 hex digits, or a short one), or a local folder's `tree-<hash>`: letters, digits, `_` and `-`, at most 128. */
const COMMIT_ID = /^[0-9A-Za-z][0-9A-Za-z_-]{0,127}$/;
/** A GitHub account (letters, digits and hyphens, not first) and repository name as folder names. */
const GITHUB_OWNER = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/;
const GITHUB_NAME = /^[A-Za-z0-9._-]{1,100}$/;
/** The folder of every repository id that is not GitHub-shaped. */
const OTHER_IDS = '_other';

export class SnapshotFolders {
  constructor(readonly root: string) {}

  /**
   * One immutable directory per repository and commit, inside the root whatever the id: a GitHub
   * `owner/name` is `<root>/<owner>/<name>/<commit>`; any other repository id (a local folder's
   * name, anything a source list or a dataset says) is `<root>/_other/<safeName(id)>/<commit>`,
   * and `_other` is never an owner (owners start with a letter or a digit). Every snapshot sits at
   * the same depth, so none is inside another, and different (id, commit) pairs never share a
   * folder. A commit that is not a plain commit id is refused.
   */
  dirFor(repoId: string, commit: string): string {
    if (!COMMIT_ID.test(commit)) throw new Error(`not a commit id: ${JSON.stringify(commit.slice(0, 80))}${commit.length > 80 ? ` (${commit.length} characters)` : ''}`);
    const parts = repoId.split('/');
    const github = parts.length === 2 && GITHUB_OWNER.test(parts[0]!) && GITHUB_NAME.test(parts[1]!) && parts[1] !== '.' && parts[1] !== '..';
    const dir = path.join(this.root, ...(github ? parts : [OTHER_IDS, safeName(repoId)]), commit);
    // Belt and braces: the folder is two levels of plain names and the commit below the root.
    const rel = path.relative(this.root, dir);
    if (rel.split(path.sep).length !== 3 || rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`snapshot folder of ${JSON.stringify(repoId.slice(0, 80))} would leave ${this.root}`);
    return dir;
  }

  /** The extracted tree of repoId@commit (it exists once the snapshot is complete). */
  treeDir(repoId: string, commit: string): string {
    return path.join(this.dirFor(repoId, commit), 'tree');
  }

  /**
   * Copies a tree (a local folder, or one extracted elsewhere) into the snapshot of repoId@commit,
   * atomically: readers see no snapshot or a complete one. VCS folders are left out; symlinks are
   * copied as links (the analysis refuses any that points outside the tree).
   */
  adoptTree(repoId: string, commit: string, source: string): Promise<Snapshot> {
    return this.materialize(repoId, commit, (tree) =>
      fs.cp(source, tree, { recursive: true, verbatimSymlinks: true, filter: (src) => !VCS_FOLDERS.includes(path.basename(src)) }),
    );
  }

  /** Unpacks a tree archive (`packTree`'s output, streamed in chunks) into the snapshot of repoId@commit, atomically. */
  adoptArchive(repoId: string, commit: string, chunks: AsyncIterable<Buffer>): Promise<Snapshot> {
    return this.materialize(repoId, commit, (tree) => unpackTree(chunks, tree));
  }

  /**
   * Builds the snapshot of repoId@commit in a temporary folder with `fill(treeDir)`, then renames it
   * into place: readers see no snapshot or a complete one, and of two processes building the same
   * snapshot the first to finish wins (their trees are identical).
   */
  protected async materialize(repoId: string, commit: string, fill: (tree: string) => Promise<void>): Promise<Snapshot> {
    const found = await this.existing(repoId, commit);
    if (found) return found;
    const final = this.dirFor(repoId, commit);
    await fs.mkdir(path.dirname(final), { recursive: true });
    const tmp = `${final}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await fill(path.join(tmp, 'tree'));
      const stats = await hashTree(path.join(tmp, 'tree'));
      const manifest: Manifest = { repoId, commit, files: stats.files, pythonFiles: stats.pythonFiles, bytes: stats.bytes, tarballSha256: null };
      await fs.writeFile(path.join(tmp, 'manifest.json'), JSON.stringify(manifest, null, 2));
      try {
        await fs.rename(tmp, final);
      } catch {
        // Another process stored the same snapshot first: it is identical, keep it.
        const other = await this.existing(repoId, commit);
        if (other) return other;
        throw new Error(`cannot store snapshot ${repoId}@${commit}`);
      }
      return { ...manifest, dir: path.join(final, 'tree'), reused: false };
    } finally {
      await fs.rm(tmp, { recursive: true, force: true });
    }
  }

  async existing(repoId: string, commit: string): Promise<Snapshot | null> {
    const dir = this.dirFor(repoId, commit);
    try {
      const m = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
      return { ...m, dir: path.join(dir, 'tree'), reused: true };
    } catch {
      return null;
    }
  }
}
