/**
 * A GitHub tarball into the store's snapshot folders. Tarballs are decompressed in-process with a
 * size cap (a gzip bomb stops at the cap) and unpacked by the system `tar` (fixed arguments, the
 * archive on its standard input, a time limit), which refuses absolute and `..` member names;
 * symlinks stay as they are and the analysis never follows one out of the tree.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { hashTree, SnapshotFolders, spawnTar, TAR_TIMEOUT_MS, type Manifest, type Snapshot } from '../store/snapshots';

export interface SnapshotLimits {
  /** Compressed tarball size. */
  maxTarballBytes: number;
  /** Uncompressed tar stream size. */
  maxTreeBytes: number;
}

export const DEFAULT_LIMITS: SnapshotLimits = { maxTarballBytes: 100 * 1024 * 1024, maxTreeBytes: 400 * 1024 * 1024 };

export type ExtractResult = { ok: true; snapshot: Snapshot } | { ok: false; reason: string };

async function runTar(args: string[], input: Buffer): Promise<void> {
  const tar = spawnTar(args, ['pipe', 'ignore', 'pipe'], TAR_TIMEOUT_MS);
  tar.child.stdin!.on('error', () => undefined);
  tar.child.stdin!.end(input);
  const failed = await tar.failure('unpack it');
  if (failed) throw new Error(failed);
}

/** The store's snapshot folders, which also take a GitHub tarball in. */
export class SnapshotStore extends SnapshotFolders {
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
      await runTar(['-x', '-f', '-', '-C', path.resolve(tree), '--strip-components=1', '--no-same-owner', '--no-same-permissions', '--no-overwrite-dir'], tar);
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
