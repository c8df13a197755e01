/**
 * The date of a local checkout's pinned commit, read in-process from its `.git` folder with
 * isomorphic-git (loose objects and packs alike) through git-checkout.ts's read-only file system
 * (no write, no link followed at a path's last step, no FIFO or device opened); no `git` process
 * runs, so nothing of the folder's configuration or hooks is executed. The sandbox resolves the
 * repository's packages as of this date. Anything unreadable (no `.git` folder, a worktree's `gitdir:` file, a missing
 * object, a date out of range) is no date: the packages are then the newest releases.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { READ_ONLY_FS } from './git-checkout';

const SHA = /^[0-9a-f]{40}$/;
/** Dates outside this range are a wrong clock, not a commit of code a sandbox runs. */
const EARLIEST = Date.UTC(1990, 0, 1);
const LATEST = Date.UTC(2200, 0, 1);

/** The committer date of `commit` in the checkout at `dir` (ISO 8601, UTC), or null. */
export async function localCommitDate(dir: string, commit: string): Promise<string | null> {
  if (!SHA.test(commit)) return null;
  const gitdir = path.join(dir, '.git');
  try {
    if (!fs.lstatSync(gitdir).isDirectory()) return null;
    // Loaded on use: only a crawl of local checkouts needs it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const git = require('isomorphic-git') as typeof import('isomorphic-git');
    const { commit: body } = await git.readCommit({ fs: READ_ONLY_FS, dir, gitdir, oid: commit });
    const ms = (body.committer ?? body.author).timestamp * 1000;
    if (!Number.isFinite(ms) || ms < EARLIEST || ms >= LATEST) return null;
    return new Date(ms).toISOString();
  } catch {
    return null;
  }
}
