/** Source archives made on the spot, served to uv from a local `findLinks` folder. */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tarGz, type TarMember } from '../../support/archives';

/** Writes `<dir>/<name>-<version>.tar.gz` holding a setup.py-only project (no pyproject.toml). */
export function makeSdist(dir: string, name: string, version: string, setupPy: string): string {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-sdist-'));
  const root = path.join(work, `${name}-${version}`);
  fs.mkdirSync(root);
  fs.writeFileSync(path.join(root, 'setup.py'), setupPy);
  fs.writeFileSync(path.join(root, 'PKG-INFO'), `Metadata-Version: 1.0\nName: ${name}\nVersion: ${version}\n`);
  fs.mkdirSync(dir, { recursive: true });
  const archive = path.join(dir, `${name}-${version}.tar.gz`);
  execFileSync('tar', ['-C', work, '-czf', archive, `${name}-${version}`]);
  fs.rmSync(work, { recursive: true, force: true });
  return archive;
}

/** Writes `<dir>/<fileName>` as a gzipped tarball of exactly these members (any names, in order). */
export function writeTarball(dir: string, fileName: string, members: TarMember[]): string {
  fs.mkdirSync(dir, { recursive: true });
  const archive = path.join(dir, fileName);
  fs.writeFileSync(archive, tarGz(members));
  return archive;
}
