/**
 * Snapshots: a repository tree at a pinned commit, extracted once under the data directory and
 * reused by every later analysis of that commit. Tarballs are decompressed in-process with a size
 * cap (a gzip bomb stops at the cap) and unpacked by the system `tar`, which refuses absolute
 * and `..` member names; symlinks stay as they are and the analysis never follows one out of the tree.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { hashTree } from './local';
import type { Snapshot } from './types';

export interface SnapshotLimits {
  /** Compressed tarball size. */
  maxTarballBytes: number;
  /** Uncompressed tar stream size. */
  maxTreeBytes: number;
}

export const DEFAULT_LIMITS: SnapshotLimits = { maxTarballBytes: 100 * 1024 * 1024, maxTreeBytes: 400 * 1024 * 1024 };

export type ExtractResult = { ok: true; snapshot: Snapshot } | { ok: false; reason: string };

interface Manifest {
  repoId: string;
  commit: string;
  files: number;
  pythonFiles: number;
  bytes: number;
  tarballSha256: string | null;
}

function runTar(args: string[], input: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('tar', args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar exited with ${code}: ${stderr.trim().slice(0, 500)}`))));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
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

export class SnapshotStore {
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
  private async materialize(repoId: string, commit: string, fill: (tree: string) => Promise<void>): Promise<Snapshot> {
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

  /** Extracts a GitHub tarball (one top-level folder) into the snapshot of `repoId@commit`. */
  async fromTarball(repoId: string, commit: string, tarball: Buffer, limits: SnapshotLimits = DEFAULT_LIMITS): Promise<ExtractResult> {
    const found = await this.existing(repoId, commit);
    if (found) return { ok: true, snapshot: found };
    if (tarball.length > limits.maxTarballBytes) return { ok: false, reason: `tarball too large (${tarball.length} bytes > ${limits.maxTarballBytes})` };
    if (tarball.length < 2 || tarball[0] !== 0x1f || tarball[1] !== 0x8b) return { ok: false, reason: 'not a gzip tarball' };
    let tar: Buffer;
    try {
      tar = zlib.gunzipSync(tarball, { maxOutputLength: limits.maxTreeBytes });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'ERR_BUFFER_TOO_LARGE' || /Cannot create a Buffer larger|exceeds|too large/i.test(e.message)) {
        return { ok: false, reason: `repository too large when unpacked (> ${limits.maxTreeBytes} bytes)` };
      }
      return { ok: false, reason: `corrupt tarball: ${e.message}` };
    }
    const final = this.dirFor(repoId, commit);
    await fs.mkdir(path.dirname(final), { recursive: true });
    const tmp = `${final}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    const tree = path.join(tmp, 'tree');
    await fs.mkdir(tree, { recursive: true });
    try {
      await runTar(['-x', '-f', '-', '-C', tree, '--strip-components=1', '--no-same-owner', '--no-same-permissions', '--no-overwrite-dir'], tar);
      const stats = await hashTree(tree);
      if (stats.pythonFiles === 0) {
        await fs.rm(tmp, { recursive: true, force: true });
        return { ok: false, reason: `no Python files (${stats.files} files, none ending in .py)` };
      }
      const manifest: Manifest = {
        repoId,
        commit,
        files: stats.files,
        pythonFiles: stats.pythonFiles,
        bytes: stats.bytes,
        tarballSha256: createHash('sha256').update(tarball).digest('hex'),
      };
      await fs.writeFile(path.join(tmp, 'manifest.json'), JSON.stringify(manifest, null, 2));
      try {
        await fs.rename(tmp, final);
      } catch {
        // Another worker finished the same snapshot first: theirs is identical, keep it.
        await fs.rm(tmp, { recursive: true, force: true });
        const other = await this.existing(repoId, commit);
        if (other) return { ok: true, snapshot: other };
        throw new Error(`cannot store snapshot ${repoId}@${commit}`);
      }
      return { ok: true, snapshot: { ...manifest, dir: path.join(final, 'tree'), reused: false } };
    } catch (err) {
      await fs.rm(tmp, { recursive: true, force: true });
      return { ok: false, reason: `cannot extract tarball: ${(err as Error).message}` };
    }
  }
}
