/**
 * Setup's node-modules step (scripts/lib/node-modules.sh, step 1 of scripts/bootstrap.sh) with the
 * real npm, on a small project of two packages: the first run installs, a second run right after it
 * installs nothing, and the tracked lock file is byte for byte what it was, both when `npm ci`
 * accepts the lock file and when it refuses one that lacks an optional package (npm then falls
 * back to `npm install`, which rewrites the lock file).
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCRIPT = path.resolve(__dirname, '../../scripts/lib/node-modules.sh');

jest.setTimeout(300_000);

/** A project depending on a local package whose optional dependency is a small registry package. */
async function project(complete: boolean): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-setup-'));
  fs.mkdirSync(path.join(dir, 'dep'));
  fs.writeFileSync(path.join(dir, 'dep', 'package.json'), JSON.stringify({ name: 'dep', version: '1.0.0', optionalDependencies: { 'content-type': '2.1.0' } }));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'fixture', version: '1.0.0', private: true, dependencies: { dep: 'file:./dep' } }));
  await run('npm', ['install', '--package-lock-only', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir });
  if (!complete) {
    const lock = JSON.parse(fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8'));
    expect(lock.packages['node_modules/content-type']).toBeDefined();
    delete lock.packages['node_modules/content-type'];
    fs.writeFileSync(path.join(dir, 'package-lock.json'), JSON.stringify(lock, null, 2) + '\n');
  }
  return dir;
}

const setup = (dir: string) => run('bash', [SCRIPT, path.join(dir, 'logs')], { cwd: dir });

describe.each([
  ['a lock file npm ci accepts', true, /installing node modules/],
  ['a lock file npm ci refuses (an optional package missing)', false, /npm rewrote package-lock.json; the tracked lock file is kept/],
])('setup with %s', (_name, complete, firstRunSays) => {
  let dir: string;
  beforeAll(async () => { dir = await project(complete); });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('installs once, keeps the tracked lock file, and a second run right after installs nothing', async () => {
    const tracked = fs.readFileSync(path.join(dir, 'package-lock.json'));
    const first = await setup(dir);
    expect(first.stderr).toMatch(firstRunSays);
    expect(fs.existsSync(path.join(dir, 'node_modules', 'content-type', 'package.json'))).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'package-lock.json')).equals(tracked)).toBe(true);

    // A file npm did not put there survives only if the second run leaves node_modules alone.
    fs.writeFileSync(path.join(dir, 'node_modules', 'left-alone'), '');
    const second = await setup(dir);
    expect(second.stderr).toBe('');
    expect(fs.existsSync(path.join(dir, 'node_modules', 'left-alone'))).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'package-lock.json')).equals(tracked)).toBe(true);
  });

  it('installs again when the lock file changes', async () => {
    fs.appendFileSync(path.join(dir, 'package-lock.json'), '\n');
    const third = await setup(dir);
    expect(third.stderr).toMatch(/installing node modules/);
    expect(fs.existsSync(path.join(dir, 'node_modules', 'left-alone'))).toBe(false);
  });
});
