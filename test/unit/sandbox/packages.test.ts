import { IMPORT_TO_DISTRIBUTION, distributionForImport, normalizeDistributionName } from '../../../activities/sandbox/packages';
import { canonicalRequirement, requirementSetKey } from '../../../activities/sandbox/package-store';
import { validateRequirement } from '../../../activities/sandbox/install-commands';

describe('import name -> distribution', () => {
  test('the table is large and every entry is a valid distribution name', () => {
    const entries = Object.entries(IMPORT_TO_DISTRIBUTION);
    expect(entries.length).toBeGreaterThanOrEqual(100);
    for (const [, dist] of entries) expect(validateRequirement(dist)).toBe(dist);
  });

  test.each([
    ['bs4', 'beautifulsoup4'],
    ['cv2', 'opencv-python-headless'],
    ['yaml', 'PyYAML'],
    ['sklearn', 'scikit-learn'],
    ['PIL', 'Pillow'],
    ['Crypto', 'pycryptodome'],
    ['dateutil', 'python-dateutil'],
    ['google.protobuf', 'protobuf'],
    ['numpy', 'numpy'],
    ['some_unknown_pkg', 'some_unknown_pkg'],
  ])('%s -> %s', (imp, dist) => {
    expect(distributionForImport(imp)).toBe(dist);
  });

  test('the standard library and private modules are never installed', () => {
    for (const name of ['os', 'json', 'asyncio', 'tkinter', 'distutils', 'xml.etree', '_socket']) expect(distributionForImport(name)).toBeNull();
  });
});

describe('requirement sets', () => {
  test('normalise names as pip compares them', () => {
    expect(normalizeDistributionName('Typing_Extensions')).toBe('typing-extensions');
    expect(canonicalRequirement('PyYAML==6.0')).toBe('pyyaml==6.0');
  });

  test('the cache key ignores order, case and duplicates but not versions', () => {
    const key = requirementSetKey(['numpy', 'PyYAML']);
    expect(requirementSetKey(['pyyaml', 'numpy', 'numpy'])).toBe(key);
    expect(requirementSetKey(['pyyaml', 'numpy==2.0'])).not.toBe(key);
    expect(key).toMatch(/^[0-9a-f]{20}$/);
  });

  test('invalid requirements never reach pip', () => {
    expect(() => requirementSetKey(['numpy; rm -rf /'])).toThrow(/not a valid requirement/);
  });
});
