/**
 * Pinning a local folder never runs anything its repository configures. A real git repository
 * whose `.git/config` names a `core.fsmonitor` hook, a filter driver on tracked files (through
 * `.gitattributes`) and a second driver in a file it `include`s, each a script that leaves a marker
 * file, is pinned through the launcher's path (`prepareSources`, as `start.ts --local` does): no
 * marker appears, no process is started, the repository is not written, and the pin is its HEAD.
 * The same repository asked by git itself runs all three, which shows the trap is real.
 */
import childProcess = require('node:child_process');
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pinLocalFolder } from '../../../activities/sources';
import { LocalStore } from '../../../activities/store/local';
import { prepareSources } from '../../../scripts/lib/crawl';

/** git for setting up the test's repositories: no global or system configuration of this machine. */
function git(cwd: string, ...args: string[]): string {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' };
  return childProcess.execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, env, encoding: 'utf8', timeout: 30_000 }).trim();
}

/** A repository with one commit: a package, a config file, `.gitattributes` naming two filter drivers and a `.gitignore`. */
function committedRepository(dir: string): string {
  fs.mkdirSync(path.join(dir, 'pkg'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'pkg', '__init__.py'), '');
  fs.writeFileSync(path.join(dir, 'pkg', 'mod.py'), 'def double(x):\n    return 2 * x\n');
  fs.writeFileSync(path.join(dir, 'setup.cfg'), '[metadata]\nname = hostile\n');
  fs.writeFileSync(path.join(dir, '.gitattributes'), '*.py filter=evil\n*.cfg filter=evil2\n');
  fs.writeFileSync(path.join(dir, '.gitignore'), 'build/\n');
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'first');
  return git(dir, 'rev-parse', 'HEAD');
}

/** Every file of a folder, recursively, relative to it. */
function filesOf(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

describe('pinning a local folder whose git configuration is hostile', () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-hostile-git-'));
  const markers = path.join(base, 'markers');
  const repo = path.join(base, 'hostile');
  let head: string;
  let headDate: string;

  beforeAll(() => {
    fs.mkdirSync(markers);
    fs.mkdirSync(repo);
    head = committedRepository(repo);
    // Read before the trap is set: the commit's date, which the pin carries for the sandbox.
    headDate = new Date(Number(git(repo, 'show', '-s', '--format=%ct', 'HEAD')) * 1000).toISOString();
    // The trap: each configured command leaves a marker named by its first argument, and passes
    // its input through (so git, running it, still finds the checkout clean).
    const trap = path.join(base, 'trap');
    fs.writeFileSync(trap, `#!/bin/sh\ntouch '${markers}'/"$1"\ncat\n`, { mode: 0o755 });
    fs.writeFileSync(path.join(base, 'included.config'), `[filter "evil2"]\n\tclean = ${trap} include-filter-clean\n\trequired = true\n`);
    fs.appendFileSync(
      path.join(repo, '.git', 'config'),
      [
        '[core]',
        `\tfsmonitor = ${trap} fsmonitor`,
        `\thooksPath = ${base}`,
        '[filter "evil"]',
        `\tclean = ${trap} filter-clean`,
        `\tsmudge = ${trap} filter-smudge`,
        '\trequired = true',
        '[include]',
        `\tpath = ${path.join(base, 'included.config')}`,
        `[includeIf "gitdir:${repo}/"]`,
        `\tpath = ${path.join(base, 'included.config')}`,
        '',
      ].join('\n'),
    );
    // Tracked files whose times differ from the index: git would read them again, through the filters.
    const later = new Date(Date.now() + 60_000);
    for (const f of ['pkg/mod.py', 'setup.cfg']) fs.utimesSync(path.join(repo, f), later, later);
  });

  it('pins it to its HEAD through the launcher, running nothing and writing nothing into it', async () => {
    const gitFolderBefore = Object.fromEntries(filesOf(path.join(repo, '.git')).map((f) => [f, fs.readFileSync(path.join(repo, '.git', f)).toString('base64')]));
    const store = new LocalStore(fs.mkdtempSync(path.join(os.tmpdir(), 'repost-hostile-store-')));

    // Every way of starting a process, watched while the folder is pinned and stored.
    const cp = childProcess as unknown as Record<string, (...args: unknown[]) => unknown>;
    const started: string[] = [];
    const saved = new Map<string, (...args: unknown[]) => unknown>();
    for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
      const original = cp[name]!;
      saved.set(name, original);
      cp[name] = (...args: unknown[]) => {
        started.push(`${name} ${String(args[0])}`);
        return original(...args);
      };
    }
    let sources;
    try {
      sources = await prepareSources(store, [{ kind: 'local', path: repo, name: 'hostile' }]);
    } finally {
      for (const [name, fn] of saved) cp[name] = fn;
    }

    expect(started).toEqual([]);
    expect(fs.readdirSync(markers)).toEqual([]);
    const source = sources[0]!;
    expect(source.kind === 'local' && source.pinned).toEqual({ repoId: 'hostile', commit: head, commitDate: headDate });
    // The snapshot holds the tree without its .git folder.
    const tree = await store.openSnapshot('hostile', head);
    expect(filesOf(tree!)).toEqual(['.gitattributes', '.gitignore', 'pkg/__init__.py', 'pkg/mod.py', 'setup.cfg']);
    // Nothing in .git was written (no refreshed index, no lock file).
    const gitFolderAfter = Object.fromEntries(filesOf(path.join(repo, '.git')).map((f) => [f, fs.readFileSync(path.join(repo, '.git', f)).toString('base64')]));
    expect(gitFolderAfter).toEqual(gitFolderBefore);
  });

  it('pins by the tree whatever is not a clean checkout of its own, and still runs nothing', async () => {
    const treePin = /^tree-[0-9a-f]{32}$/;
    // An ignored file leaves the checkout clean; an untracked one does not.
    fs.mkdirSync(path.join(repo, 'build'));
    fs.writeFileSync(path.join(repo, 'build', 'out.txt'), 'built\n');
    expect(await pinLocalFolder(repo)).toBe(head);
    fs.writeFileSync(path.join(repo, 'pkg', 'new.py'), 'X = 1\n');
    expect(await pinLocalFolder(repo)).toMatch(treePin);
    fs.rmSync(path.join(repo, 'pkg', 'new.py'));
    expect(await pinLocalFolder(repo)).toBe(head);

    // A changed tracked file, and one replaced by a FIFO (read without blocking: refused, not a hang).
    const mod = path.join(repo, 'pkg', 'mod.py');
    const original = fs.readFileSync(mod);
    fs.appendFileSync(mod, '# changed\n');
    expect(await pinLocalFolder(repo)).toMatch(treePin);
    fs.rmSync(mod);
    childProcess.execFileSync('mkfifo', [mod], { timeout: 10_000 });
    expect(await pinLocalFolder(repo)).toMatch(treePin);
    fs.rmSync(mod);
    fs.writeFileSync(mod, original);
    expect(await pinLocalFolder(repo)).toBe(head);

    // A subfolder of the repository is pinned by its own content.
    expect(await pinLocalFolder(path.join(repo, 'pkg'))).toMatch(treePin);
    // A `.git` file pointing at another repository's folder is not followed.
    const pointer = path.join(base, 'pointer');
    fs.cpSync(repo, pointer, { recursive: true, filter: (src) => path.basename(src) !== '.git' });
    fs.writeFileSync(path.join(pointer, '.git'), `gitdir: ${path.join(repo, '.git')}\n`);
    expect(await pinLocalFolder(pointer)).toMatch(treePin);
    expect(fs.readdirSync(markers)).toEqual([]);
  });

  it('pins a checkout whose index differs from HEAD by its tree', async () => {
    const staged = path.join(base, 'staged');
    fs.mkdirSync(staged);
    const stagedHead = committedRepository(staged);
    expect(await pinLocalFolder(staged)).toBe(stagedHead);
    const mod = path.join(staged, 'pkg', 'mod.py');
    const original = fs.readFileSync(mod);
    fs.appendFileSync(mod, '# staged\n');
    git(staged, 'add', 'pkg/mod.py');
    fs.writeFileSync(mod, original);
    // The work tree equals HEAD again; the index does not.
    expect(await pinLocalFolder(staged)).toMatch(/^tree-[0-9a-f]{32}$/);
  });

  it('is a real trap: git itself, asked for the status, runs the monitor and both filters', () => {
    childProcess.execFileSync('git', ['status', '--porcelain'], { cwd: repo, env: { PATH: process.env.PATH, HOME: base, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'ignore', timeout: 30_000 });
    expect(fs.readdirSync(markers).sort()).toEqual(expect.arrayContaining(['filter-clean', 'fsmonitor', 'include-filter-clean']));
  });
});
