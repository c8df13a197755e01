/**
 * Repository snapshots as folders under the data directory: a tree at a pinned commit, stored once
 * and reused by every later analysis of that commit (`<root>/<owner>/<name>/<commit>/tree`, with a
 * manifest beside it). Trees enter atomically (built aside, then renamed into place), so a reader
 * sees no snapshot or a complete one. The local store keeps its snapshots here; the PostgreSQL
 * store keeps their archives (`packTree`) and materialises them here on demand.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';

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
 * A tree as a gzipped tar stream (symlinks kept as links, VCS folders left out), yielded in
 * chunks as `tar` writes them, so a large tree never sits in memory whole.
 */
export async function* packTree(dir: string): AsyncIterable<Buffer> {
  const child = spawn('tar', ['-c', '-z', '-f', '-', '-C', dir, ...VCS_FOLDERS.map((f) => `--exclude=${f}`), '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  exited.catch(() => undefined); // awaited below; no unhandled rejection meanwhile
  try {
    for await (const chunk of child.stdout) yield chunk as Buffer;
    const code = await exited;
    if (code !== 0) throw new Error(`tar could not pack ${dir} (exit ${code}): ${stderr.trim().slice(0, 500)}`);
  } finally {
    if (child.exitCode === null) child.kill();
  }
}

/** Unpacks `packTree`'s stream into `dest` (created), feeding `tar` chunk by chunk. */
export async function unpackTree(chunks: AsyncIterable<Buffer>, dest: string): Promise<void> {
  await fs.mkdir(dest, { recursive: true });
  const child = spawn('tar', ['-x', '-z', '-f', '-', '-C', dest, '--no-same-owner', '--no-same-permissions'], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  exited.catch(() => undefined); // awaited below; no unhandled rejection meanwhile
  child.stdin.on('error', () => undefined);
  try {
    for await (const chunk of chunks) {
      if (child.exitCode !== null) break;
      // Wait for tar to take more, or to have stopped (a broken archive): never for a drain that cannot come.
      if (!child.stdin.write(chunk)) await Promise.race([new Promise((resolve) => child.stdin.once('drain', resolve)), exited]);
    }
  } finally {
    child.stdin.end();
  }
  const code = await exited;
  if (code !== 0) throw new Error(`tar could not unpack the snapshot archive (exit ${code}): ${stderr.trim().slice(0, 500)}`);
}

export class SnapshotFolders {
  constructor(readonly root: string) {}

  /** `<root>/<owner>/<name>/<commit>`: one immutable directory per pinned commit. */
  dirFor(repoId: string, commit: string): string {
    const safe = repoId.split('/').map((p) => p.replace(/[^A-Za-z0-9._-]/g, '_'));
    if (!/^[0-9a-zA-Z][\w-]*$/.test(commit)) throw new Error(`not a commit id: ${commit}`);
    return path.join(this.root, ...safe, commit);
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
