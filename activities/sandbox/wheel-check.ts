/**
 * What a source build may hand over: exactly one regular file, a wheel of the distribution and
 * version that was built, whose own METADATA says the same. A build runs the package's code, and
 * that code decides what lands in its output folder; the wheelhouse it feeds is `--find-links`
 * for every later resolution, so a stray `six-99.0` wheel there would replace PyPI's six for
 * every script on the machine. Everything else the build left is refused, each with its reason.
 *
 * The wheel is read in memory with `yauzl` (names validated, entry sizes checked); nothing of it
 * reaches a host command.
 */
import * as yauzl from 'yauzl';
import { normalizeDistributionName } from './packages';
import { sameVersion } from './pep440';

export interface BuiltPackage {
  name: string;
  version: string;
}

/** One entry of a build's output folder, as lstat saw it inside the container. */
export interface OutputEntry {
  name: string;
  kind: 'file' | 'symlink' | 'directory' | 'fifo' | 'socket' | 'other';
  size: number;
}

/** `{distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl` (PEP 427), or null. */
export function parseWheelFilename(fileName: string): { name: string; version: string } | null {
  const m = /^([A-Za-z0-9](?:[A-Za-z0-9._]*[A-Za-z0-9])?)-([A-Za-z0-9_.!+]+)(?:-(\d[A-Za-z0-9_.]*))?-([A-Za-z0-9_.]+)-([A-Za-z0-9_.]+)-([A-Za-z0-9_.]+)\.whl$/.exec(fileName);
  return m ? { name: m[1]!, version: m[2]! } : null;
}

function isOf(candidate: { name: string; version: string }, expected: BuiltPackage): boolean {
  return normalizeDistributionName(candidate.name) === normalizeDistributionName(expected.name) && sameVersion(candidate.version, expected.version);
}

export type OutputChoice = { ok: true; wheel: OutputEntry; refused: string[] } | { ok: false; reason: string; refused: string[] };

/** Picks the one wheel of `expected` among a build's output entries; says why each other entry is refused. */
export function chooseBuiltWheel(entries: OutputEntry[], expected: BuiltPackage, maxBytes: number, total = entries.length): OutputChoice {
  const refused: string[] = [];
  const wheels: OutputEntry[] = [];
  for (const e of entries) {
    const shown = JSON.stringify(e.name.slice(0, 200));
    if (e.kind !== 'file') {
      refused.push(`${shown}: a ${e.kind === 'other' ? 'special file' : e.kind}, not a regular file`);
      continue;
    }
    const parsed = e.name.endsWith('.whl') ? parseWheelFilename(e.name) : null;
    if (!parsed) refused.push(`${shown}: not a wheel`);
    else if (!isOf(parsed, expected)) refused.push(`${shown}: a wheel of ${parsed.name} ${parsed.version}, not of ${expected.name} ${expected.version}`);
    else if (e.size > maxBytes) refused.push(`${shown}: ${e.size} bytes, more than the ${maxBytes} a build may hand over`);
    else wheels.push(e);
  }
  if (total > entries.length) refused.push(`${total - entries.length} more entries not listed`);
  if (wheels.length === 1) return { ok: true, wheel: wheels[0]!, refused };
  const what = `${expected.name} ${expected.version}`;
  return {
    ok: false,
    reason: wheels.length === 0 ? `the build left no usable wheel of ${what}` : `the build left ${wheels.length} wheels of ${what} (${wheels.map((w) => w.name).join(', ')}); exactly one is taken`,
    refused,
  };
}

/** The first header block of a METADATA file: its Name and Version. */
export function metadataHeaders(text: string): { name: string | null; version: string | null } {
  const head = text.split(/\r?\n\r?\n/)[0] ?? '';
  return { name: /^Name:[ \t]*(.+?)\s*$/m.exec(head)?.[1] ?? null, version: /^Version:[ \t]*(.+?)\s*$/m.exec(head)?.[1] ?? null };
}

const MAX_ENTRIES = 100_000;
const MAX_METADATA_BYTES = 1024 * 1024;
/** What the wheel may unpack to (uv unpacks it into the store's cache). */
const MAX_UNPACKED_BYTES = 2 * 1024 * 1024 * 1024;

/** Checks the wheel's contents: one `.dist-info` of the expected distribution, whose METADATA names it. Null when good, else the reason. */
export function checkWheelContents(data: Buffer, expected: BuiltPackage): Promise<string | null> {
  return new Promise((resolve) => {
    yauzl.fromBuffer(data, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true }, (err, zip) => {
      if (err || !zip) return resolve(`it is not a readable zip archive: ${err?.message ?? 'no archive'}`);
      if (zip.entryCount > MAX_ENTRIES) return resolve(`it has more than ${MAX_ENTRIES} members`);
      let settled = false;
      const done = (reason: string | null) => {
        if (settled) return;
        settled = true;
        zip.close();
        resolve(reason);
      };
      const distInfos = new Set<string>();
      let unpacked = 0;
      let metadata: string | null = null;
      let metadataFiles = 0;
      zip.on('error', (e: Error) => done(`it is not a valid wheel: ${e.message}`));
      zip.on('end', () => {
        if (distInfos.size !== 1) return done(`it holds ${distInfos.size} .dist-info folders (${[...distInfos].slice(0, 5).join(', ')}), not one`);
        const [folder] = [...distInfos];
        const named = /^(.+)-([^-]+)\.dist-info$/.exec(folder!);
        if (!named || !isOf({ name: named[1]!, version: named[2]! }, expected)) return done(`its ${folder} does not belong to ${expected.name} ${expected.version}`);
        if (metadata === null) return done(`it has no ${folder}/METADATA`);
        if (metadataFiles > 1) return done(`it holds ${metadataFiles} entries named ${folder}/METADATA`);
        const headers = metadataHeaders(metadata);
        if (!headers.name || !headers.version) return done(`its METADATA names no Name or no Version`);
        if (!isOf({ name: headers.name, version: headers.version }, expected)) {
          return done(`its METADATA says ${headers.name} ${headers.version}, not ${expected.name} ${expected.version}`);
        }
        done(null);
      });
      zip.on('entry', (entry: yauzl.Entry) => {
        unpacked += entry.uncompressedSize;
        if (unpacked > MAX_UNPACKED_BYTES) return done(`it unpacks to more than ${MAX_UNPACKED_BYTES} bytes`);
        const [top, second, ...rest] = entry.fileName.split('/');
        if (top!.endsWith('.dist-info')) distInfos.add(top!);
        if (!(top!.endsWith('.dist-info') && second === 'METADATA' && rest.length === 0)) return zip.readEntry();
        if (entry.uncompressedSize > MAX_METADATA_BYTES) return done(`its METADATA is ${entry.uncompressedSize} bytes`);
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return done(`its METADATA cannot be read: ${e?.message ?? 'no stream'}`);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', (se: Error) => done(`its METADATA cannot be read: ${se.message}`));
          stream.on('end', () => {
            metadataFiles += 1;
            metadata = Buffer.concat(chunks).toString('utf8');
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}
