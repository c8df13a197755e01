/**
 * Local folders as sources. The folder is used in place; its "commit" is a hash of the paths and
 * contents of its files, so function ids stay stable while the folder does not change.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { RepoRef, Snapshot } from './types';

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
