/**
 * The tracked lock file is one `npm ci` accepts on any platform, and the node versions agree:
 * every optional native package a locked package names (other platforms' builds included) has its
 * own entry, as stricter npm releases require before they install anything; and every locked
 * package's `engines.node` admits the oldest node that package.json's `engines` allows.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as semver from 'semver';

const ROOT = path.resolve(__dirname, '../../..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
type Locked = { version?: string; engines?: { node?: string }; optionalDependencies?: Record<string, string>; link?: boolean };
const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { lockfileVersion: number; packages: Record<string, Locked> };

/** Where node's resolution finds `name` from the package at `from` (a lock key): the nearest node_modules up the tree. */
function resolve(from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const key = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
    if (lock.packages[key]) return key;
    if (!dir) return undefined;
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut < 0 ? '' : dir.slice(0, cut);
  }
}

describe('package-lock.json', () => {
  it('is a version 3 lock file whose root matches package.json', () => {
    expect(lock.lockfileVersion).toBe(3);
    expect(lock.packages['']?.engines?.node).toBe(pkg.engines.node);
  });

  it('has an entry for every optional dependency of every locked package, whatever its platform', () => {
    const missing: string[] = [];
    for (const [key, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        if (!resolve(key, name)) missing.push(`${key} -> ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("has no package whose engines.node refuses the oldest node package.json's engines allows", () => {
    const oldest = semver.minVersion(pkg.engines.node);
    expect(oldest).not.toBeNull();
    const refusing = Object.entries(lock.packages)
      .filter(([key, e]) => key && e.engines?.node && !semver.satisfies(oldest!, e.engines.node))
      .map(([key, e]) => `${key} wants node ${e.engines!.node}`);
    expect(refusing).toEqual([]);
  });
});
