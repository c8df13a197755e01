/**
 * Reading a source archive on the host, in-process and bounded: no name, path or byte of it ever
 * reaches a host command. The only thing the host wants from an sdist is the text of its top-level
 * `pyproject.toml` (the build requirements); the build itself happens in a sandbox container.
 *
 * Gzipped tarballs are decompressed by Node's zlib and parsed by the `tar` package (npm's own
 * archive library), zip archives by `yauzl`; both are only read, never extracted. Every read has
 * limits on the number of entries, the size of the one entry kept in memory, the decompressed
 * total and the time it may take, so a gzip bomb or an endless archive stops at a bound instead
 * of stalling the worker. An archive that is not shaped like an sdist (every member under one
 * `<name>-<version>/` folder, relative names without `..` or control characters) is refused with
 * the reason.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import * as zlib from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import * as yauzl from 'yauzl';
import { normalizeDistributionName } from './packages';
import { parseSdistFilename, sameVersion } from './pep440';

export interface ArchiveLimits {
  maxEntries: number;
  /** The largest member read into memory (pyproject.toml). */
  maxEntryBytes: number;
  /** Decompressed bytes of the whole archive. */
  maxTotalBytes: number;
  timeoutMs: number;
}

export const SDIST_READ_LIMITS: ArchiveLimits = {
  maxEntries: 50_000,
  maxEntryBytes: 1024 * 1024,
  maxTotalBytes: 512 * 1024 * 1024,
  timeoutMs: 60_000,
};

export type SdistContents =
  | { ok: true; format: 'tar.gz' | 'zip'; root: string; entries: number; pyproject: string | null }
  /** An archive kind the host does not open (bzip2): the build in the sandbox reads it, with default build requirements. */
  | { ok: true; format: 'unread'; root: null; entries: null; pyproject: null }
  | { ok: false; reason: string };

/** Why a member name is unacceptable in an sdist, or null when it is fine. */
export function memberNameProblem(name: string): string | null {
  if (name === '') return 'an empty member name';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return `a member name with a control character (${JSON.stringify(name.slice(0, 120))})`;
  if (name.startsWith('/') || /^[A-Za-z]:[\\/]/.test(name)) return `an absolute member name (${JSON.stringify(name.slice(0, 120))})`;
  if (name.split(/[\\/]/).includes('..')) return `a member name with a ".." component (${JSON.stringify(name.slice(0, 120))})`;
  return null;
}

/** The first folder of a member name (`./` prefixes ignored). */
function topFolder(name: string): string {
  return name.replace(/^(?:\.\/)+/, '').split('/')[0]!;
}

/**
 * Checks the members' names as they come: all under one top folder, which names this
 * distribution and version. Returns a reason to refuse, or null.
 */
export class SdistShape {
  root: string | null = null;
  entries = 0;

  constructor(
    private readonly expected: { name: string; version: string },
    private readonly limits: ArchiveLimits,
  ) {}

  add(name: string): string | null {
    this.entries += 1;
    if (this.entries > this.limits.maxEntries) return `it has more than ${this.limits.maxEntries} members`;
    const bad = memberNameProblem(name);
    if (bad) return `it holds ${bad}`;
    const top = topFolder(name);
    if (this.root === null) {
      const parsed = parseSdistFilename(`${top}.tar.gz`);
      if (!parsed || normalizeDistributionName(parsed.name) !== normalizeDistributionName(this.expected.name) || !sameVersion(parsed.version.text, this.expected.version)) {
        return `its top folder ${JSON.stringify(top.slice(0, 120))} is not ${this.expected.name}-${this.expected.version}/`;
      }
      this.root = top;
    } else if (top !== this.root) {
      return `the member ${JSON.stringify(name.slice(0, 200))} is outside its top folder ${this.root}/`;
    }
    return null;
  }

  isPyproject(name: string): boolean {
    return this.root !== null && name.replace(/^(?:\.\/)+/, '') === `${this.root}/pyproject.toml`;
  }
}

class Refused extends Error {}

/** Reads the archive's shape and its top-level pyproject.toml, within `limits`. */
export async function readSdist(
  file: string,
  expected: { name: string; version: string },
  limits: ArchiveLimits = SDIST_READ_LIMITS,
  signal?: AbortSignal,
): Promise<SdistContents> {
  const lower = path.basename(file).toLowerCase();
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const stop = signal ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    if (lower.endsWith('.tar.gz') || lower.endsWith('.tgz')) return await readTarGz(file, expected, limits, stop);
    if (lower.endsWith('.zip')) return await readZip(file, expected, limits, stop);
    return { ok: true, format: 'unread', root: null, entries: null, pyproject: null };
  } catch (err) {
    if (err instanceof Refused) return { ok: false, reason: err.message };
    if (timeout.aborted) return { ok: false, reason: `reading it took longer than ${Math.round(limits.timeoutMs / 1000)}s` };
    if (signal?.aborted) throw err;
    return { ok: false, reason: `it cannot be read: ${(err as Error).message}` };
  }
}

async function readTarGz(file: string, expected: { name: string; version: string }, limits: ArchiveLimits, stop: AbortSignal): Promise<SdistContents> {
  const shape = new SdistShape(expected, limits);
  let pyproject: string | null = null;
  let total = 0;
  let refusal: Refused | null = null;
  const parser = new Parser({ strict: true });
  const refuse = (reason: string) => {
    refusal ??= new Refused(reason);
    parser.abort(refusal);
  };
  parser.on('entry', (entry: ReadEntry) => {
    const reason = refusal ? null : shape.add(entry.path);
    if (reason) refuse(reason);
    else if (!refusal && shape.isPyproject(entry.path) && ['File', 'OldFile', 'ContiguousFile'].includes(entry.type)) {
      if (entry.size > limits.maxEntryBytes) refuse(`its pyproject.toml is ${entry.size} bytes (at most ${limits.maxEntryBytes} are read)`);
      else {
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () => (pyproject = Buffer.concat(chunks).toString('utf8')));
        return;
      }
    }
    entry.resume();
  });
  const parsed = new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', (err: Error) => reject(refusal ?? err));
  });
  parsed.catch(() => undefined);
  // Decompressed bytes are counted on their way to the parser: a gzip bomb stops at the cap.
  const counted = new Writable({
    write(chunk: Buffer, _encoding, done) {
      total += chunk.length;
      if (total > limits.maxTotalBytes) refuse(`it unpacks to more than ${limits.maxTotalBytes} bytes`);
      if (refusal) return done(refusal);
      parser.write(chunk);
      done(refusal ?? undefined);
    },
    final(done) {
      parser.end();
      done(refusal ?? undefined);
    },
  });
  try {
    await pipeline(fs.createReadStream(file), zlib.createGunzip(), counted, { signal: stop });
    await parsed;
  } catch (err) {
    throw refusal ?? err;
  }
  if (refusal) throw refusal;
  if (shape.root === null) throw new Refused('it holds no member');
  return { ok: true, format: 'tar.gz', root: shape.root, entries: shape.entries, pyproject };
}

function readZip(file: string, expected: { name: string; version: string }, limits: ArchiveLimits, stop: AbortSignal): Promise<SdistContents> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false, decodeStrings: true, autoClose: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no archive'));
      const fail = (e: Error) => {
        zip.close();
        reject(e);
      };
      if (zip.entryCount > limits.maxEntries) return fail(new Refused(`it has more than ${limits.maxEntries} members`));
      const onAbort = () => fail(stop.reason instanceof Error ? stop.reason : new Error('aborted'));
      stop.addEventListener('abort', onAbort, { once: true });
      const shape = new SdistShape(expected, limits);
      let pyproject: string | null = null;
      let total = 0;
      zip.on('error', (e: Error) => fail(e));
      zip.on('end', () => {
        stop.removeEventListener('abort', onAbort);
        if (shape.root === null) return reject(new Refused('it holds no member'));
        resolve({ ok: true, format: 'zip', root: shape.root, entries: shape.entries, pyproject });
      });
      zip.on('entry', (entry: yauzl.Entry) => {
        const reason = shape.add(entry.fileName);
        if (reason) return fail(new Refused(reason));
        total += entry.uncompressedSize;
        if (total > limits.maxTotalBytes) return fail(new Refused(`it unpacks to more than ${limits.maxTotalBytes} bytes`));
        if (!shape.isPyproject(entry.fileName)) return zip.readEntry();
        if (entry.uncompressedSize > limits.maxEntryBytes) return fail(new Refused(`its pyproject.toml is ${entry.uncompressedSize} bytes (at most ${limits.maxEntryBytes} are read)`));
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return fail(e ?? new Error('unreadable member'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', (se: Error) => fail(se));
          stream.on('end', () => {
            pyproject = Buffer.concat(chunks).toString('utf8');
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}
