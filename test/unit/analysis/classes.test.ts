/** Class skeletons and OpenClassGen metrics. */
import * as path from 'node:path';
import { cyclomaticComplexity, isOpenClassGenTestClass, RepositoryAnalyzer, type ClassInfo } from '../../../activities/analysis';

const REPOS = path.resolve(__dirname, '../../fixtures/repos');

describe('classes', () => {
  let ml: ClassInfo[];
  let shop: ClassInfo[];
  beforeAll(async () => {
    ml = (await RepositoryAnalyzer.open(path.join(REPOS, 'mlkit'))).classes();
    shop = (await RepositoryAnalyzer.open(path.join(REPOS, 'shop'))).classes();
  });
  const get = (list: ClassInfo[], q: string) => list.find((c) => c.qualname === q)!;

  it('builds the skeleton: signatures and docstrings, bodies replaced by pass', () => {
    expect(get(ml, 'LinearModel').skeleton).toBe(
      [
        'class LinearModel(Estimator):',
        '    """y = slope * x + intercept"""',
        '',
        '    def __init__(self, store=None):',
        '        pass',
        '',
        '    def fit(self, xs, ys):',
        '        pass',
        '',
        '    def predict(self, x):',
        '        """Predict one value."""',
        '        pass',
        '',
        '    def score(self, xs, ys):',
        '        pass',
        '',
        '    def describe(self, fmt="{slope:.3f}x + {intercept:.3f}"):',
        '        pass',
        '',
        '    def dynamic(self, name):',
        '        pass',
        '',
        '    def match_kind(self, value):',
        '        pass',
      ].join('\n'),
    );
    const item = get(shop, 'Item').skeleton;
    expect(item.startsWith('@dataclass\nclass Item(Base):\n    """A thing on sale."""\n')).toBe(true);
    expect(item).toContain('\n\n    class Meta:\n        def key(self, item):\n            pass');
    expect(item).not.toContain('ordering');
    // A skeleton is valid Python.
    expect(() => RepositoryAnalyzer.fromSources({ 's.py': `${item}\n` }).functions()).not.toThrow();
    expect(RepositoryAnalyzer.fromSources({ 's.py': `${item}\n` }).skipped).toEqual([]);
  });

  it('computes size, complexity, nesting, coupling, inheritance and documentation metrics', () => {
    const lm = get(ml, 'LinearModel').metrics;
    expect(lm.methods).toBe(7);
    // radon's rules: a match counts its cases less the catch-all `case _`.
    expect(Object.fromEntries(get(ml, 'LinearModel').methods.map((m) => [m.name, m.cyclomatic]))).toEqual({ __init__: 2, fit: 1, predict: 2, score: 3, describe: 1, dynamic: 1, match_kind: 3 });
    expect(lm.cyclomatic.total).toBe(13);
    expect(lm.cyclomatic.max).toBe(3);
    expect(lm.maxNesting).toBe(1);
    expect(lm.inheritanceDepth).toBe(1);
    expect(lm.children).toBe(0);
    expect(lm.programUnits).toBe(8);
    expect(lm.documentedUnits).toBe(2);
    expect(lm.docstringCoverage).toBe(0.25);
    expect(lm.totalLines).toBe(42);
    expect(lm.commentLines).toBe(2);
    expect(lm.blankLines).toBe(8);
    expect(get(ml, 'LinearModel').documentation).toBe('partial');
    const store = get(ml, 'Store').metrics;
    expect(store.children).toBe(2);
    expect(store.inheritanceDepth).toBe(0);
    // FileStore uses os (external; open is a builtin) and MemoryStore, dumps, Store (local).
    expect(get(ml, 'FileStore').metrics.fanOut).toEqual({ local: 3, external: 1, total: 4 });
    expect(get(shop, 'Item').metrics.inheritanceDepth).toBe(1);
    expect(get(shop, 'Base').metrics.children).toBe(2);
  });

  it('excludes test classes by the OpenClassGen rule', () => {
    expect(shop.map((c) => c.qualname)).not.toContain('TestCart');
    expect(ml.map((c) => c.qualname)).not.toContain('LinearCase');
    expect(isOpenClassGenTestClass('app/models.py', 'UserCase')).toBe(true);
    expect(isOpenClassGenTestClass('app/models.py', 'TestUser')).toBe(true);
    expect(isOpenClassGenTestClass('app/unit_conv/models.py', 'Meter')).toBe(true);
    expect(isOpenClassGenTestClass('app/models.py', 'Contest')).toBe(false);
    // Path words, not substrings: a test folder or file is excluded, a word that only contains one is not.
    for (const p of ['tests/models.py', 'pkg/test/models.py', 'pkg/test_models.py', 'pkg/models_test.py', 'pkg/unit/models.py', 'pkg/unittests/models.py', 'pkg/TestUtils.py', 'pkg/unit-tests/models.py', 'conftest.py']) {
      expect([p, isOpenClassGenTestClass(p, 'Meter')]).toEqual([p, true]);
    }
    for (const p of ['networkx/algorithms/shortest_paths/generic.py', 'networkx/algorithms/shortest.py', 'networkx/algorithms/community/louvain.py', 'pkg/units.py', 'pkg/contest/attestation.py', 'pkg/latest.py', 'pkg/Unitary.py', 'pkg/protester.py']) {
      expect([p, isOpenClassGenTestClass(p, 'Meter')]).toEqual([p, false]);
    }
  });

  it('counts decision points for cyclomatic complexity', () => {
    const a = RepositoryAnalyzer.fromSources({
      'c.py': 'def f(a, b):\n    if a and b or not a:\n        return [x for x in b if x]\n    while a:\n        a -= 1\n    try:\n        pass\n    except ValueError:\n        pass\n    return a if b else 0\n',
    });
    const node = a.repo.modules.get('c.py')!.tree.rootNode.firstNamedChild!;
    // 1 + if + and + or + for_in + if_clause + while + except + conditional
    expect(cyclomaticComplexity(node)).toBe(9);
    // An assert counts once; the `and` inside it does not (radon does not look inside asserts).
    const b = RepositoryAnalyzer.fromSources({ 'c.py': 'def f(a, b):\n    assert a and b\n' });
    expect(cyclomaticComplexity(b.repo.modules.get('c.py')!.tree.rootNode.firstNamedChild!)).toBe(2);
  });
});
