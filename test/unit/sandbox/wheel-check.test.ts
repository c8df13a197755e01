/** What a source build may hand over to the wheelhouse: one regular file, the right wheel, its METADATA agreeing. */
import { checkWheelContents, chooseBuiltWheel, metadataHeaders, parseWheelFilename, type OutputEntry } from '../../../activities/sandbox/wheel-check';
import { zipBuffer } from '../../support/archives';

const EXPECTED = { name: 'repost-poison', version: '1.0' };
const RIGHT = 'repost_poison-1.0-py3-none-any.whl';

test('wheel file names (PEP 427), build tags included', () => {
  expect(parseWheelFilename(RIGHT)).toEqual({ name: 'repost_poison', version: '1.0' });
  expect(parseWheelFilename('six-99.0-py2.py3-none-any.whl')).toEqual({ name: 'six', version: '99.0' });
  expect(parseWheelFilename('numpy-2.1.0-1-cp311-cp311-manylinux_2_17_x86_64.whl')).toEqual({ name: 'numpy', version: '2.1.0' });
  expect(parseWheelFilename('x.whl')).toBeNull();
  expect(parseWheelFilename('../evil-1.0-py3-none-any.whl')).toBeNull();
});

test('of everything a build left, only the one regular wheel of its name and version is taken', () => {
  const entries: OutputEntry[] = [
    { name: 'six-99.0-py2.py3-none-any.whl', kind: 'file', size: 900 },
    { name: 'host.whl', kind: 'symlink', size: 11 },
    { name: 'pipe.whl', kind: 'fifo', size: 0 },
    { name: 'big.whl', kind: 'file', size: 2 * 1024 ** 3 },
    { name: 'repost_poison-1.0-py3-none-any.whl.big', kind: 'file', size: 1 },
    { name: 'nested', kind: 'directory', size: 4096 },
    { name: 'Repost.Poison-1.0.0-py3-none-any.whl', kind: 'symlink', size: 3 },
    { name: RIGHT, kind: 'file', size: 1200 },
  ];
  const choice = chooseBuiltWheel(entries, EXPECTED, 64 * 1024 * 1024);
  expect(choice).toMatchObject({ ok: true, wheel: { name: RIGHT } });
  expect(choice.refused).toEqual([
    '"six-99.0-py2.py3-none-any.whl": a wheel of six 99.0, not of repost-poison 1.0',
    '"host.whl": a symlink, not a regular file',
    '"pipe.whl": a fifo, not a regular file',
    '"big.whl": not a wheel',
    '"repost_poison-1.0-py3-none-any.whl.big": not a wheel',
    '"nested": a directory, not a regular file',
    '"Repost.Poison-1.0.0-py3-none-any.whl": a symlink, not a regular file',
  ]);
});

test('no wheel, a wheel over the size cap, or two wheels: nothing is taken, and the reason says which', () => {
  expect(chooseBuiltWheel([{ name: RIGHT, kind: 'fifo', size: 0 }], EXPECTED, 100)).toMatchObject({ ok: false, reason: 'the build left no usable wheel of repost-poison 1.0' });
  expect(chooseBuiltWheel([{ name: RIGHT, kind: 'file', size: 101 }], EXPECTED, 100)).toMatchObject({
    ok: false,
    refused: [`"${RIGHT}": 101 bytes, more than the 100 a build may hand over`],
  });
  const two = chooseBuiltWheel([{ name: RIGHT, kind: 'file', size: 1 }, { name: 'repost_poison-1.0-py2-none-any.whl', kind: 'file', size: 1 }], EXPECTED, 100);
  expect(two).toMatchObject({ ok: false, reason: expect.stringMatching(/left 2 wheels of repost-poison 1\.0/) });
  expect(chooseBuiltWheel([], EXPECTED, 100, 5000).refused).toEqual(['5000 more entries not listed']);
});

const metadata = (name: string, version: string) => `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n\nName: not-a-header-any-more\n`;

test('METADATA headers come from the first block only', () => {
  expect(metadataHeaders(metadata('repost-poison', '1.0'))).toEqual({ name: 'repost-poison', version: '1.0' });
});

test('the wheel itself must hold one .dist-info of the distribution, whose METADATA names it', async () => {
  const good = await zipBuffer([
    { name: 'repost_poison/__init__.py', body: '' },
    { name: 'repost_poison-1.0.dist-info/METADATA', body: metadata('repost-poison', '1.0') },
    { name: 'repost_poison-1.0.dist-info/RECORD', body: '' },
  ]);
  expect(await checkWheelContents(good, EXPECTED)).toBeNull();
  const lying = await zipBuffer([{ name: 'repost_poison-1.0.dist-info/METADATA', body: metadata('six', '99.0') }]);
  expect(await checkWheelContents(lying, EXPECTED)).toBe('its METADATA says six 99.0, not repost-poison 1.0');
  const other = await zipBuffer([{ name: 'six-99.0.dist-info/METADATA', body: metadata('six', '99.0') }]);
  expect(await checkWheelContents(other, EXPECTED)).toBe('its six-99.0.dist-info does not belong to repost-poison 1.0');
  const twice = await zipBuffer([
    { name: 'repost_poison-1.0.dist-info/METADATA', body: metadata('repost-poison', '1.0') },
    { name: 'six-99.0.dist-info/METADATA', body: metadata('six', '99.0') },
  ]);
  expect(await checkWheelContents(twice, EXPECTED)).toMatch(/holds 2 \.dist-info folders/);
  const none = await zipBuffer([{ name: 'repost_poison-1.0.dist-info/RECORD', body: '' }]);
  expect(await checkWheelContents(none, EXPECTED)).toBe('it has no repost_poison-1.0.dist-info/METADATA');
  expect(await checkWheelContents(Buffer.from('not a zip'), EXPECTED)).toMatch(/^it is not a readable zip archive/);
});
