/**
 * A local checkout's commit date, read in-process from its `.git` folder (loose objects and packs),
 * travels with the pinned snapshot; a folder pinned by its tree's hash has none. The repositories
 * are made with isomorphic-git (packed with the system `git`, and a FIFO made with `mkfifo`, as test setup only).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as git from 'isomorphic-git';
import { localCommitDate } from '../../../activities/sources/commit-date';
import { snapshotLocalFolder } from '../../../activities/sources/repo-source';
import { LocalStore } from '../../../activities/store/local';

/** 2024-09-05T12:00:00Z, in git's seconds. */
const WHEN = Date.UTC(2024, 8, 5, 12) / 1000;

async function checkout(dir: string, committedAt = WHEN): Promise<string> {
  fs.mkdirSync(path.join(dir, 'pkg'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'pkg', 'mod.py'), 'def f(x):\n    return x + 1\n');
  await git.init({ fs, dir, defaultBranch: 'main' });
  await git.add({ fs, dir, filepath: 'pkg/mod.py' });
  const who = (timestamp: number) => ({ name: 'Dev', email: 'dev@example.com', timestamp, timezoneOffset: -120 });
  // Authored a week before it was committed: the committer's date is the one that counts.
  return git.commit({ fs, dir, message: 'first', author: who(committedAt - 7 * 86400), committer: who(committedAt) });
}

describe('the date of a local checkout', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'commit-date-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  test('is its commit date, from a loose object or a pack', async () => {
    const dir = path.join(root, 'repo');
    const sha = await checkout(dir);
    expect(await localCommitDate(dir, sha)).toBe('2024-09-05T12:00:00.000Z');
    execFileSync('git', ['-C', dir, 'gc', '--quiet'], { timeout: 60_000 });
    expect(fs.existsSync(path.join(dir, '.git', 'objects', sha.slice(0, 2), sha.slice(2)))).toBe(false);
    expect(await localCommitDate(dir, sha)).toBe('2024-09-05T12:00:00.000Z');
  });

  test('is none for a tree hash, an unknown commit, a folder without .git, a .git file, an impossible clock or an object that is a FIFO', async () => {
    const dir = path.join(root, 'repo');
    const sha = await checkout(dir);
    expect(await localCommitDate(dir, 'tree-0123abcd')).toBeNull();
    expect(await localCommitDate(dir, '0'.repeat(40))).toBeNull();
    expect(await localCommitDate(dir, '../../etc/passwd')).toBeNull();
    const plain = path.join(root, 'plain');
    fs.mkdirSync(plain);
    expect(await localCommitDate(plain, sha)).toBeNull();
    // A worktree's `.git` file points elsewhere: not followed.
    const worktree = path.join(root, 'worktree');
    fs.mkdirSync(worktree);
    fs.writeFileSync(path.join(worktree, '.git'), `gitdir: ${path.join(dir, '.git')}\n`);
    expect(await localCommitDate(worktree, sha)).toBeNull();
    const epoch = path.join(root, 'epoch');
    expect(await localCommitDate(epoch, await checkout(epoch, 60))).toBeNull();
    // The commit's object replaced by a FIFO (the folder is untrusted): no date, and no hang.
    const fifo = path.join(root, 'fifo');
    const fifoSha = await checkout(fifo);
    const object = path.join(fifo, '.git', 'objects', fifoSha.slice(0, 2), fifoSha.slice(2));
    fs.rmSync(object);
    execFileSync('mkfifo', [object], { timeout: 10_000 });
    expect(await localCommitDate(fifo, fifoSha)).toBeNull();
  });

  test('travels with the pinned snapshot; a folder pinned by its tree has none', async () => {
    const store = new LocalStore(path.join(root, 'data'));
    const dir = path.join(root, 'repo');
    const sha = await checkout(dir);
    expect(await snapshotLocalFolder(store, { kind: 'local', path: dir, name: 'repo' })).toEqual({ repoId: 'repo', commit: sha, commitDate: '2024-09-05T12:00:00.000Z' });
    const plain = path.join(root, 'plain');
    fs.mkdirSync(plain);
    fs.writeFileSync(path.join(plain, 'mod.py'), 'x = 1\n');
    const pinned = await snapshotLocalFolder(store, { kind: 'local', path: plain });
    expect(pinned.commit).toMatch(/^tree-/);
    expect(pinned.commitDate).toBeNull();
    // A source the launcher pinned keeps the date it was given.
    expect(await snapshotLocalFolder(store, { kind: 'local', path: '/gone', pinned: { repoId: 'r', commit: sha, commitDate: '2024-09-05T12:00:00.000Z' } })).toEqual({
      repoId: 'r',
      commit: sha,
      commitDate: '2024-09-05T12:00:00.000Z',
    });
  });
});
