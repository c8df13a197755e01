import { AsOfResolution, asOfCutoff, filteredByCutoff, isCodeDate } from '../../../activities/sandbox/as-of';
import { classifyUvError } from '../../../activities/sandbox/install-failure';
import { requirementSetKey } from '../../../activities/sandbox/package-store';

const DAY = 24 * 3600;

/** uv's answer when a package has no release before the cutoff (its wording, trimmed). */
const FILTERED = [
  'error: No solution found when resolving dependencies',
  '  cause: Because there are no versions of elasticipy and you require elasticipy, we can conclude that your requirements are unsatisfiable.',
  '',
  'hint: `elasticipy` was filtered by `exclude-newer` to only include packages uploaded before 2024-10-01T00:00:00Z.',
].join('\n');

describe('the cutoff of code of a given date', () => {
  test('the date plus the grace period, rounded up to midnight UTC', () => {
    expect(asOfCutoff('2024-09-05T12:34:56Z', 30 * DAY)).toBe('2024-10-06T00:00:00Z');
    expect(asOfCutoff('2024-09-05T12:34:56+02:00', 0)).toBe('2024-09-06T00:00:00Z');
    expect(asOfCutoff('2025-03-01', 0)).toBe('2025-03-01T00:00:00Z');
    expect(asOfCutoff('2025-03-01', 1)).toBe('2025-03-02T00:00:00Z');
  });

  test('only an ISO date is a date: anything else gives no cutoff', () => {
    for (const bad of ['', 'yesterday', '2024', '1 March 2025', '2025-03-01; rm -rf /', '--exclude-newer', '1850-01-01', '2025-13-45']) {
      expect(isCodeDate(bad)).toBe(false);
      expect(asOfCutoff(bad, 0)).toBeNull();
    }
  });
});

describe('a dated resolution', () => {
  test('without a date it adds nothing and records nothing', () => {
    const r = new AsOfResolution(null);
    expect(r.uvArgs()).toEqual([]);
    expect(r.asOfOf('numpy')).toBeUndefined();
    expect(r.note()).toBeNull();
    expect(r.next(classifyUvError(FILTERED), FILTERED)).toBe('final');
  });

  test('a package with no release by then is let through at its newest; the others keep the date', () => {
    const r = new AsOfResolution('2024-10-01T00:00:00Z');
    expect(r.uvArgs()).toEqual(['--exclude-newer', '2024-10-01T00:00:00Z']);
    expect(filteredByCutoff(FILTERED)).toEqual(['elasticipy']);
    expect(r.next(classifyUvError(FILTERED), FILTERED)).toBe('retry');
    expect(r.uvArgs()).toEqual(['--exclude-newer', '2024-10-01T00:00:00Z', '--exclude-newer-package', 'elasticipy=false']);
    expect(r.asOfOf('Elasticipy')).toBeUndefined();
    expect(r.asOfOf('numpy')).toBe('2024-10-01T00:00:00Z');
    expect(r.note()).toMatch(/^packages as of 2024-10-01T00:00:00Z, except elasticipy at the newest release \(elasticipy: /);
  });

  test('when letting packages through does not help, every package takes its newest release', () => {
    const r = new AsOfResolution('2024-10-01T00:00:00Z');
    const conflict = classifyUvError(
      'error: No solution found when resolving dependencies\n  cause: Because alpha==1.0 depends on beta>=2 and you require beta<2, we can conclude that your requirements are unsatisfiable.\n',
    );
    expect(conflict.packages).toEqual(['alpha', 'beta']);
    let answers = 0;
    while (r.dated && answers < 10) {
      expect(r.next(conflict, '')).toBe('retry');
      answers += 1;
    }
    // The named packages were let through once; then the date was given up.
    expect(answers).toBe(2);
    expect(r.uvArgs()).toEqual([]);
    expect(r.asOfOf('alpha')).toBeUndefined();
    expect(r.asOfOf('numpy')).toBeUndefined();
    expect(r.note()).toMatch(/^packages at their newest releases: the resolution as of 2024-10-01T00:00:00Z failed \(the requirements cannot be resolved together/);
    // After that the failure stands.
    expect(r.next(conflict, '')).toBe('final');
  });

  test('a version from a local wheel (a source build, a find-links folder) is not vouched for as of the date', () => {
    const r = new AsOfResolution('2021-06-01T00:00:00Z');
    r.pinnedFromLocalWheels(['six==1.16.0', 'Source-Only==2.0', 'other==1.0'], ['source_only-2.0-py3-none-any.whl', 'other-0.9-py3-none-any.whl', 'README']);
    expect(r.asOfOf('six')).toBe('2021-06-01T00:00:00Z');
    expect(r.asOfOf('source-only')).toBeUndefined();
    expect(r.asOfOf('other')).toBe('2021-06-01T00:00:00Z');
    expect(r.note()).toBe('packages as of 2021-06-01T00:00:00Z; source-only from a local wheel, which has no upload date');
  });

  test('a name the index does not know, or a transient failure, is the answer at any date', () => {
    const r = new AsOfResolution('2024-10-01T00:00:00Z');
    expect(r.next({ kind: 'not-found', packages: ['nope'], message: 'nope is not on the package index' }, '')).toBe('final');
    expect(r.next({ kind: 'network', packages: [], message: 'the package index could not be reached' }, '')).toBe('final');
    expect(r.next({ kind: 'timeout', packages: [], message: 'time' }, '')).toBe('final');
    expect(r.dated).toBe(true);
  });
});

describe('the store keys a set by its date too', () => {
  test('the same names as of a date, as of another date and at their newest are three sets', () => {
    const newest = requirementSetKey(['numpy', 'PyYAML']);
    const dated = requirementSetKey(['numpy', 'PyYAML'], '2024-10-01T00:00:00Z');
    const other = requirementSetKey(['numpy', 'PyYAML'], '2024-11-01T00:00:00Z');
    expect(new Set([newest, dated, other]).size).toBe(3);
    expect(requirementSetKey(['pyyaml', 'numpy'], '2024-10-01T00:00:00Z')).toBe(dated);
    // A set without a date keeps the key it always had (a store filled earlier stays valid).
    expect(requirementSetKey(['numpy', 'PyYAML'], null)).toBe(newest);
  });
});
