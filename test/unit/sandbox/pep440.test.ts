import { canonicalVersion, compareVersions, parseSdistFilename, parseVersion, sameVersion, satisfies } from '../../../activities/sandbox/pep440';

const v = (t: string) => parseVersion(t)!;

test('versions order as PEP 440 says for the common shapes', () => {
  const sorted = ['1.0rc1', '1.0', '1.0.post1', '1.2', '1.10', '2.0.0'].map(v).sort((a, b) => compareVersions(a, b)).map((x) => x.text);
  expect(sorted).toEqual(['1.0rc1', '1.0', '1.0.post1', '1.2', '1.10', '2.0.0']);
});

test.each([
  ['1.4.2', '>=1.2,<2', true],
  ['2.0', '>=1.2,<2', false],
  ['1.4.9', '==1.4.*', true],
  ['1.5', '==1.4.*', false],
  ['2.3', '~=2.1', true],
  ['3.0', '~=2.1', false],
  ['1.0rc1', '', false],
  ['1.0rc1', '>=1.0rc1', true],
])('%s satisfies "%s": %s', (version, spec, ok) => {
  expect(satisfies(v(version), spec)).toBe(ok);
});

test('sdist file names, dashes in old names included', () => {
  expect(parseSdistFilename('python-dateutil-2.8.2.tar.gz')).toMatchObject({ name: 'python-dateutil', version: { text: '2.8.2' } });
  expect(parseSdistFilename('docopt-0.6.2.tar.gz')).toMatchObject({ name: 'docopt', version: { text: '0.6.2' } });
  expect(parseSdistFilename('docopt-0.6.2-py3-none-any.whl')).toBeNull();
});

test('canonical versions: spellings of one version compare equal, others do not', () => {
  expect(canonicalVersion('1.0.0')).toBe('1');
  expect(canonicalVersion('v1.0-Alpha.1')).toBe('1a1');
  expect(canonicalVersion('2.0-post')).toBe('2.post0');
  expect(canonicalVersion('2.0-3')).toBe('2.post3');
  expect(canonicalVersion('1.2.dev4+Local_Build')).toBe('1.2.dev4+local.build');
  expect(canonicalVersion('0!1.5rc2')).toBe('1.5rc2');
  expect(canonicalVersion('not a version')).toBeNull();
  expect(sameVersion('1.0', '1.0.0')).toBe(true);
  expect(sameVersion('1.0a1', '1.0a2')).toBe(false);
  expect(sameVersion('99.0', '1.16.0')).toBe(false);
  expect(sameVersion('x', 'x')).toBe(false);
});
