/**
 * Source archives are read in-process, within limits, and refused with a reason when they are not
 * shaped like an sdist; a member's name is only ever data.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { Header } from 'tar';
import { SDIST_READ_LIMITS, memberNameProblem, readSdist, type ArchiveLimits } from '../../../activities/sandbox/sdist-archive';
import { buildRequirements, redirectTarget } from '../../../activities/sandbox/source-build';
import { tarBuffer, tarGz, zipBuffer, type TarMember } from '../../support/archives';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-sdist-unit-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(name: string, data: Buffer): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, data);
  return file;
}

const PYPROJECT = '[build-system]\nrequires = ["setuptools>=61", "wheel", "cython; python_version<\'3\'"]\nbuild-backend = "setuptools.build_meta"\n';
const EXPECTED = { name: 'demo-pkg', version: '1.0' };
const members = (extra: TarMember[] = []): TarMember[] => [
  { name: 'demo_pkg-1.0/', type: 'Directory' },
  { name: 'demo_pkg-1.0/setup.py', body: 'from setuptools import setup\nsetup()\n' },
  { name: 'demo_pkg-1.0/pyproject.toml', body: PYPROJECT },
  ...extra,
];

test('a well-formed tarball: its top folder and the text of its pyproject.toml', async () => {
  const file = write('demo_pkg-1.0.tar.gz', tarGz(members()));
  const read = await readSdist(file, EXPECTED);
  expect(read).toEqual({ ok: true, format: 'tar.gz', root: 'demo_pkg-1.0', entries: 3, pyproject: PYPROJECT });
  if (read.ok) expect(buildRequirements(read.pyproject).requirements).toEqual(['setuptools>=61', 'wheel', 'cython']);
  expect(buildRequirements(null).requirements).toEqual(['setuptools>=40.8.0', 'wheel']);
});

test('a member named like a tar option is refused as outside the top folder, and read as plain data', async () => {
  const evil = "--use-compress-program=sh -c 'touch owned' a/pyproject.toml";
  const file = write('demo_pkg-1.0-evil.tar.gz', tarGz([{ name: evil, body: PYPROJECT }, ...members()]));
  expect(await readSdist(file, EXPECTED)).toEqual({ ok: false, reason: expect.stringMatching(/top folder "--use-compress-program=sh -c 'touch owned' a" is not demo-pkg-1\.0\//) });
  const later = write('demo_pkg-1.0-evil2.tar.gz', tarGz([...members(), { name: evil, body: PYPROJECT }]));
  expect(await readSdist(later, EXPECTED)).toEqual({ ok: false, reason: expect.stringMatching(/the member "--use-compress-program.*" is outside its top folder demo_pkg-1\.0\//) });
});

test.each([
  ['/etc/passwd', /absolute member name/],
  ['demo_pkg-1.0/../../x', /"\.\." component/],
  ['demo_pkg-1.0/a\u0007b', /control character/],
])('member name %j is refused', async (name, reason) => {
  expect(memberNameProblem(name)).toMatch(reason);
  const file = write(`bad-${Math.random().toString(16).slice(2)}.tar.gz`, tarGz([...members(), { name, body: 'x' }]));
  expect(await readSdist(file, EXPECTED)).toEqual({ ok: false, reason: expect.stringMatching(reason) });
});

test('the top folder must name the distribution and its version', async () => {
  const file = write('other.tar.gz', tarGz([{ name: 'six-99.0/pyproject.toml', body: PYPROJECT }]));
  expect(await readSdist(file, EXPECTED)).toEqual({ ok: false, reason: expect.stringMatching(/top folder "six-99\.0" is not demo-pkg-1\.0/) });
  // Spellings of the same name and version are one: Demo.Pkg-1.0.0 is demo-pkg 1.0.
  const spelled = write('spelled.tar.gz', tarGz([{ name: 'Demo.Pkg-1.0.0/setup.py', body: '' }]));
  expect(await readSdist(spelled, EXPECTED)).toMatchObject({ ok: true, root: 'Demo.Pkg-1.0.0', pyproject: null });
});

test('limits: entry count, the size of pyproject.toml, the decompressed total (a gzip bomb), time', async () => {
  const small: ArchiveLimits = { ...SDIST_READ_LIMITS, maxEntries: 5, maxEntryBytes: 64, maxTotalBytes: 4 * 1024 * 1024, timeoutMs: 60_000 };
  const many = write('many.tar.gz', tarGz([...members(), ...Array.from({ length: 5 }, (_, i) => ({ name: `demo_pkg-1.0/f${i}`, body: 'x' }))]));
  expect(await readSdist(many, EXPECTED, { ...small, maxEntryBytes: 1024 })).toEqual({ ok: false, reason: 'it has more than 5 members' });
  const big = write('big.tar.gz', tarGz(members()));
  expect(await readSdist(big, EXPECTED, small)).toEqual({ ok: false, reason: expect.stringMatching(/pyproject\.toml is \d+ bytes \(at most 64 are read\)/) });
  // A member of 256 MiB of zeros, compressed to a quarter of a megabyte: the reading stops at 4 MiB.
  const header = tarBuffer([{ name: 'demo_pkg-1.0/setup.py', body: '' }]).subarray(0, 512);
  const dataHeader = Buffer.alloc(512);
  new Header({ path: 'demo_pkg-1.0/data.bin', mode: 0o644, size: 256 * 1024 * 1024, type: 'File', mtime: new Date(0) }).encode(dataHeader, 0);
  const zeros = Buffer.alloc(16 * 1024 * 1024);
  const gz = zlib.createGzip({ level: 1 });
  const chunks: Buffer[] = [];
  gz.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise((r) => gz.on('end', r));
  gz.write(Buffer.concat([header, dataHeader]));
  for (let i = 0; i < 16; i++) gz.write(zeros);
  gz.end();
  await done;
  const bomb = write('bomb.tar.gz', Buffer.concat(chunks));
  expect(fs.statSync(bomb).size).toBeLessThan(2 * 1024 * 1024);
  expect(await readSdist(bomb, EXPECTED, { ...small, maxEntryBytes: 1024 })).toEqual({ ok: false, reason: 'it unpacks to more than 4194304 bytes' });
  // No time at all: the read gives up and says why.
  expect(await readSdist(bomb, EXPECTED, { ...SDIST_READ_LIMITS, timeoutMs: 0 })).toEqual({ ok: false, reason: 'reading it took longer than 0s' });
});

test('a corrupt archive and an empty one are refused with a reason', async () => {
  const corrupt = write('corrupt.tar.gz', Buffer.from('not gzip at all'));
  expect(await readSdist(corrupt, EXPECTED)).toEqual({ ok: false, reason: expect.stringMatching(/^it cannot be read: /) });
  const empty = write('empty.tar.gz', zlib.gzipSync(Buffer.alloc(1024)));
  expect(await readSdist(empty, EXPECTED)).toEqual({ ok: false, reason: expect.stringMatching(/cannot be read|holds no member/) });
});

test('zip archives are read the same way; bzip2 ones are left to the sandbox', async () => {
  const zip = write('demo_pkg-1.0.zip', await zipBuffer([{ name: 'demo_pkg-1.0/setup.py', body: '' }, { name: 'demo_pkg-1.0/pyproject.toml', body: PYPROJECT }]));
  expect(await readSdist(zip, EXPECTED)).toEqual({ ok: true, format: 'zip', root: 'demo_pkg-1.0', entries: 2, pyproject: PYPROJECT });
  const evil = write('evil.zip', await zipBuffer([{ name: 'demo_pkg-1.0/setup.py', body: '' }, { name: '-rf/pyproject.toml', body: PYPROJECT }]));
  expect(await readSdist(evil, EXPECTED)).toEqual({ ok: false, reason: expect.stringMatching(/outside its top folder/) });
  const bz2 = write('demo_pkg-1.0.tar.bz2', Buffer.from('BZh9'));
  expect(await readSdist(bz2, EXPECTED)).toEqual({ ok: true, format: 'unread', root: null, entries: null, pyproject: null });
});

describe('where a source archive download may be redirected', () => {
  it('stays on https once there, and only ever goes to http(s)', () => {
    expect(redirectTarget('https://pypi.org/simple/six/', '/packages/six-1.0.tar.gz')).toEqual({ ok: true, url: 'https://pypi.org/packages/six-1.0.tar.gz' });
    expect(redirectTarget('https://pypi.org/simple/six/', 'https://files.example/six-1.0.tar.gz')).toEqual({ ok: true, url: 'https://files.example/six-1.0.tar.gz' });
    // A local index over plain http may redirect within http (and up to https).
    expect(redirectTarget('http://127.0.0.1:8080/simple/six/', 'http://127.0.0.1:8080/f/six-1.0.tar.gz')).toMatchObject({ ok: true });
    expect(redirectTarget('http://127.0.0.1:8080/simple/six/', 'https://files.example/six-1.0.tar.gz')).toMatchObject({ ok: true });
    expect(redirectTarget('https://pypi.org/simple/six/', 'http://files.example/six-1.0.tar.gz')).toEqual({
      ok: false,
      reason: 'GET https://pypi.org/simple/six/: a redirect from https to plain http (http://files.example) is refused',
    });
    expect(redirectTarget('http://127.0.0.1:8080/simple/six/', 'file:///etc/passwd')).toEqual({ ok: false, reason: 'GET http://127.0.0.1:8080/simple/six/: a redirect to a file URL is refused' });
    expect(redirectTarget('https://pypi.org/simple/six/', 'http://[::1')).toMatchObject({ ok: false, reason: expect.stringMatching(/invalid URL is refused$/) });
  });
});
