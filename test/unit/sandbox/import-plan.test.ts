import { ImportScanCache, importedDistribution, ownModules, planImports, type ScannedImport } from '../../../activities/sandbox/import-scan';

const imp = (name: string, over: Partial<ScannedImport> = {}): ScannedImport => ({
  module: name.split('.')[0]!, name, file: 'eval_script.py', line: 1, guarded: false, typeChecking: false, dynamic: false, ...over,
});

describe('planning installs from a script’s imports', () => {
  const plan = planImports(
    {
      imports: [
        imp('yaml'),
        imp('numpy'),
        imp('ujson', { guarded: true }),
        imp('pandas', { typeChecking: true }),
        imp('six', { dynamic: true }),
        imp('redis.client', { dynamic: true, guarded: true }),
        imp('eval_script.requests', { dynamic: true }),
        imp('textkit.clean'),
        imp('helper'),
        imp('google.cloud.storage'),
        imp('urllib2'),
      ],
      errors: [],
    },
    { localModules: ['textkit'], files: { 'helper.py': '' } },
  );

  test('unguarded imports are required, guarded ones optional; local, own, TYPE_CHECKING and Python 2 names are left out', () => {
    // A literal name given to importlib or a mock patcher is an import like any other.
    expect(plan.required).toEqual(['PyYAML', 'google-cloud-storage', 'numpy', 'six']);
    expect(plan.optional).toEqual(['redis', 'ujson']);
  });

  test("the script's own module is never a package", () => {
    expect(importedDistribution(plan, 'eval_script')).toBeNull();
    expect(importedDistribution(plan, 'eval_script.requests')).toBeNull();
  });

  test('only names the source imports may be installed later, by longest dotted prefix', () => {
    expect(importedDistribution(plan, 'six')).toBe('six');
    expect(importedDistribution(plan, 'yaml.constructor')).toBe('PyYAML');
    expect(importedDistribution(plan, 'google.cloud.storage.blob')).toBe('google-cloud-storage');
    expect(importedDistribution(plan, 'requests')).toBeNull();
    expect(importedDistribution(plan, 'pandas')).toBeNull();
  });

  test("the run's files are modules of their own", () => {
    expect(ownModules({ 'helper.py': '', 'pkg/mod.py': '', 'data/input.txt': '', 'notes.txt': '' }).sort()).toEqual(['data', 'helper', 'pkg']);
  });
});

describe('ImportScanCache', () => {
  const scan = (module: string) => ({ imports: [{ module, name: module, file: 'eval_script.py', line: 1, guarded: false, typeChecking: false, dynamic: false }], errors: [] });

  test('the key depends on every name and text, not on their order', () => {
    const a = ImportScanCache.keyOf({ 'eval_script.py': 'import numpy', 'helper.py': 'x = 1' });
    expect(ImportScanCache.keyOf({ 'helper.py': 'x = 1', 'eval_script.py': 'import numpy' })).toBe(a);
    expect(ImportScanCache.keyOf({ 'eval_script.py': 'import numpy', 'helper.py': 'x = 2' })).not.toBe(a);
    expect(ImportScanCache.keyOf({ 'eval_script.py': 'import numpy' })).not.toBe(a);
    // Moving text between a name and its content is another key (lengths are part of it).
    expect(ImportScanCache.keyOf({ ab: 'c' })).not.toBe(ImportScanCache.keyOf({ a: 'bc' }));
  });

  test('bounded: the least recently used scan goes first', () => {
    const cache = new ImportScanCache(2);
    cache.set('a', scan('numpy'));
    cache.set('b', scan('pandas'));
    expect(cache.get('a')?.imports[0]?.module).toBe('numpy'); // now the most recent
    cache.set('c', scan('scipy'));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.imports[0]?.module).toBe('numpy');
    expect(cache.get('c')?.imports[0]?.module).toBe('scipy');
  });
});
