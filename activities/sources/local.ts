/**
 * Local folders as sources. The folder is used in place; its "commit" is a hash of the paths and
 * contents of its files, so function ids stay stable while the folder does not change.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { hashTree, type Snapshot } from '../store/snapshots';
import type { RepoRef } from './types';

export async function localSource(dir: string): Promise<RepoRef> {
  const abs = path.resolve(dir);
  const st = await fs.stat(abs).catch(() => null);
  if (!st || !st.isDirectory()) throw new Error(`not a directory: ${dir}`);
  const { hash } = await hashTree(abs);
  return {
    id: `local/${path.basename(abs)}`,
    owner: null,
    name: path.basename(abs),
    commit: hash.slice(0, 40),
    createdAt: null,
    license: null,
    stars: null,
    sizeKb: null,
    defaultBranch: null,
    localPath: abs,
  };
}

/** A local folder is its own snapshot: nothing is copied. */
export async function localSnapshot(ref: RepoRef): Promise<Snapshot> {
  if (!ref.localPath) throw new Error(`${ref.id} is not a local folder`);
  const stats = await hashTree(ref.localPath);
  return {
    repoId: ref.id,
    commit: ref.commit ?? stats.hash.slice(0, 40),
    dir: ref.localPath,
    files: stats.files,
    pythonFiles: stats.pythonFiles,
    bytes: stats.bytes,
    tarballSha256: null,
    reused: true,
  };
}
