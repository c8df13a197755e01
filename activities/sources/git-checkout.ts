/**
 * A local folder's git checkout, read in-process: the HEAD commit of a folder that is a clean
 * checkout of its own repository, or null. Nothing is executed: no `git`, no other program.
 *
 * A crawled folder is untrusted, its `.git` folder included, and git itself runs commands its
 * configuration names (`core.fsmonitor`, filter drivers' `clean`/`process`, hooks, and more through
 * `include`/`includeIf`). So the checkout is read with isomorphic-git, a pure JavaScript git (no
 * `child_process` in it: it never runs a hook, a filter or a monitor, and it does not follow
 * `include` files), through a file system of our own that can only read: it refuses every write,
 * follows no symbolic link at the last step of a path, and opens only regular files, without
 * blocking (a FIFO named like a tracked file is an error, not a hang).
 *
 * Clean means, as git's own `status` would say it, but decided by us: `<dir>/.git` is a real
 * folder (not a link, not a `gitdir:` file pointing elsewhere), HEAD is a commit, every tracked file
 * of the work tree and of the index equals HEAD's tree, and no file is untracked except what the
 * repository's `.gitignore` files and `.git/info/exclude` ignore (the user's global excludes are not
 * read, so a file only they ignore makes the checkout not clean). Anything else, or anything that
 * cannot be read, is not clean: the caller then pins the folder by a hash of its tree.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';

/** A write attempted through the read-only file system (isomorphic-git never should, with `refresh: false`). */
export class ReadOnlyRepositoryError extends Error {
  override name = 'ReadOnlyRepositoryError';
}

const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

/** Reads a regular file whole; a link at the last step, a FIFO, a device or a socket is refused. */
async function readRegularFile(file: string, options?: BufferEncoding | { encoding?: BufferEncoding | null } | null): Promise<Buffer | string> {
  const handle = await fsp.open(file, OPEN_FLAGS);
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw Object.assign(new Error(`EISDIR: is a directory, read '${file}'`), { code: 'EISDIR' });
    if (!stat.isFile()) throw Object.assign(new Error(`not a regular file: ${file}`), { code: 'ENOTREGULAR' });
    const data = await handle.readFile();
    const encoding = typeof options === 'string' ? options : options?.encoding;
    return encoding ? data.toString(encoding) : data;
  } finally {
    await handle.close();
  }
}

function refuse(what: string) {
  return async (target: unknown): Promise<never> => {
    throw new ReadOnlyRepositoryError(`${what} ${String(target)}: the repository is read, never written`);
  };
}

/** The file system isomorphic-git gets: reads only. */
export const READ_ONLY_FS = {
  promises: {
    readFile: readRegularFile,
    readdir: (dir: string) => fsp.readdir(dir),
    lstat: (file: string) => fsp.lstat(file),
    // isomorphic-git asks `stat` only to learn whether something exists; a link is not followed.
    stat: (file: string) => fsp.lstat(file),
    readlink: (file: string) => fsp.readlink(file),
    writeFile: refuse('write'),
    mkdir: refuse('mkdir'),
    rmdir: refuse('rmdir'),
    rm: refuse('rm'),
    unlink: refuse('unlink'),
    rename: refuse('rename'),
    symlink: refuse('symlink'),
    chmod: refuse('chmod'),
  },
};

/**
 * The HEAD commit when `dir` is a clean checkout of its own repository (see above), else null.
 * Never throws for what the folder holds: a folder that cannot be read as a checkout is not one.
 */
export async function cleanCheckoutHead(dir: string): Promise<string | null> {
  const gitdir = path.join(dir, '.git');
  const st = await fsp.lstat(gitdir).catch(() => null);
  if (!st || !st.isDirectory()) return null;
  // Loaded on use: only pinning a local folder needs it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const git = require('isomorphic-git') as typeof import('isomorphic-git');
  try {
    const head = await git.resolveRef({ fs: READ_ONLY_FS, dir, gitdir, ref: 'HEAD' });
    if (!/^[0-9a-f]{40}$/.test(head)) return null;
    // The commit must be there, with its tree (a HEAD naming a missing or other object is not a checkout).
    await git.readCommit({ fs: READ_ONLY_FS, dir, gitdir, oid: head });
    const rows = await git.statusMatrix({ fs: READ_ONLY_FS, dir, gitdir, ref: head, refresh: false, cache: {} });
    // [path, HEAD, work tree, index]: 1, 1, 1 is a tracked file that is the same in all three; an
    // untracked file is 0, 2, 0 (ignored ones are not listed), a changed one has a 2 or a 3.
    return rows.every(([, inHead, inTree, inIndex]) => inHead === 1 && inTree === 1 && inIndex === 1) ? head : null;
  } catch {
    return null;
  }
}
