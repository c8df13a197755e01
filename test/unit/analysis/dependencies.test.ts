/**
 * Local-dependency resolution and the context text, on the fixture repositories (real files)
 * and on small in-memory repositories for single features.
 */
import * as path from 'node:path';
import { formatContext, RepositoryAnalyzer, type FunctionAnalysis } from '../../../activities/analysis';

const REPOS = path.resolve(__dirname, '../../fixtures/repos');
const open = (name: string, options = {}) => RepositoryAnalyzer.open(path.join(REPOS, name), options);
const deps = (a: FunctionAnalysis) => a.dependencies.map((d) => `${d.path}::${d.qualname}`).sort();
const dep = (a: FunctionAnalysis, id: string) => a.dependencies.find((d) => `${d.path}::${d.qualname}` === id);

describe('dependencies across a package (shop)', () => {
  let shop: RepositoryAnalyzer;
  beforeAll(async () => {
    shop = await open('shop');
  });

  it('follows calls, instantiations, globals, default values, base classes and super() transitively', () => {
    const a = shop.analyze('shop/core/cart.py', 'Cart.total');
    expect(deps(a)).toEqual(
      [
        'shop/core/cart.py::Cart',
        'shop/core/cart.py::Cart.__init__',
        'shop/core/models.py::Base',
        'shop/core/models.py::Base.__init__',
        'shop/core/models.py::Item',
        'shop/core/pricing.py::ROUNDING',
        'shop/core/pricing.py::TAX_RATE',
        'shop/core/pricing.py::_round',
        'shop/core/pricing.py::apply_discount',
        'shop/core/pricing.py::with_tax',
        'shop/util/text.py::_SLUG_RE',
        'shop/util/text.py::clamp',
        'shop/util/text.py::slugify',
      ].sort(),
    );
    expect(a.standalone).toBe(false);
    expect(a.unresolved).toEqual([]);
    // Distances: what the body names is direct; what those need comes after.
    expect(dep(a, 'shop/core/pricing.py::with_tax')).toMatchObject({ kind: 'function', distance: 1, startLine: 20, endLine: 22 });
    expect(dep(a, 'shop/core/cart.py::Cart')).toMatchObject({ kind: 'class', distance: 1 });
    expect(dep(a, 'shop/core/pricing.py::TAX_RATE')).toMatchObject({ kind: 'variable', distance: 2 }); // default value of with_tax
    expect(dep(a, 'shop/core/models.py::Item')).toMatchObject({ kind: 'class', distance: 2 }); // annotation of with_tax
    expect(dep(a, 'shop/core/models.py::Base.__init__')).toMatchObject({ kind: 'method' }); // super().__init__
    expect(dep(a, 'shop/util/text.py::_SLUG_RE')!.distance).toBeGreaterThan(dep(a, 'shop/util/text.py::slugify')!.distance);
    // Dependencies are listed nearest first.
    const distances = a.dependencies.map((d) => d.distance);
    expect([...distances].sort((x, y) => x - y)).toEqual(distances);
  });

  it('resolves names re-exported by a package __init__ under an alias, and a script folder on sys.path', () => {
    const a = shop.analyze('scripts/report.py', 'main');
    expect(deps(a)).toEqual(['scripts/helpers.py::fmt', 'shop/core/pricing.py::ROUNDING', 'shop/core/pricing.py::_round', 'shop/core/pricing.py::apply_discount', 'shop/util/text.py::clamp']);
  });

  it('reaches methods through self along local base classes, and module attributes through `from . import mod`', () => {
    expect(deps(shop.analyze('shop/core/models.py', 'Item.label'))).toEqual(
      ['shop/core/models.py::Base', 'shop/core/models.py::Base.__init__', 'shop/core/models.py::Base.describe', 'shop/core/models.py::CURRENCY', 'shop/core/models.py::Item', 'shop/util/text.py::_SLUG_RE', 'shop/util/text.py::slugify'].sort(),
    );
    const rounded = shop.analyze('shop/core/cart.py', 'Cart.rounded_total');
    expect(dep(rounded, 'shop/core/pricing.py::_round')!.distance).toBe(1);
    expect(dep(rounded, 'shop/core/cart.py::Cart.total')!.distance).toBe(1);
  });

  it('marks functions without local dependencies as standalone', () => {
    const a = shop.analyze('shop/util/text.py', 'clamp');
    expect(a.standalone).toBe(true);
    expect(a.dependencies).toEqual([]);
    expect(a.context).toBe(`## shop/util/text.py\nimport re\nimport unicodedata\n\n${a.source}\n`);
  });

  it('renders the context grouped by file in dependency order, the target file last with all its imports', () => {
    const a = shop.analyze('shop/core/cart.py', 'Cart.total');
    const headers = a.context.split('\n').filter((l) => l.startsWith('## '));
    expect(headers).toEqual(['## shop/util/text.py', '## shop/core/models.py', '## shop/core/pricing.py', '## shop/core/cart.py']);
    const cartBlock = a.context.slice(a.context.indexOf('## shop/core/cart.py'));
    expect(cartBlock).toContain('from .models import Item, Base\nfrom .pricing import apply_discount, with_tax\nfrom . import pricing\n');
    expect(cartBlock).toContain('    def total(self, discount=0):\n        subtotal = sum(with_tax(i) for i in self.items)');
    expect(cartBlock).not.toContain('def cheapest'); // members the target does not need stay out
    const modelsBlock = a.context.slice(a.context.indexOf('## shop/core/models.py'), a.context.indexOf('## shop/core/pricing.py'));
    expect(modelsBlock).toContain('@dataclass\nclass Item(Base):'); // decorators come with their class
    expect(modelsBlock).toContain('from ..util.text import slugify'); // imports used by the rendered code
    expect(modelsBlock).not.toContain('def label'); // a class is a shell with the needed members only
    // Every definition appears exactly once.
    expect(a.context.match(/def slugify/g)).toHaveLength(1);
  });

  it('cuts the context to the token budget, farthest definitions first, never the direct ones', async () => {
    const full = shop.analyze('shop/core/cart.py', 'Cart.total');
    const small = (await open('shop', { contextTokenBudget: 200 })).analyze('shop/core/cart.py', 'Cart.total');
    expect(full.truncated).toEqual([]);
    expect(small.truncated.length).toBeGreaterThan(0);
    expect(small.truncated[0]).toEqual({ path: 'shop/util/text.py', qualname: '_SLUG_RE', reason: 'budget' });
    expect(small.contextTokens).toBeLessThan(full.contextTokens);
    for (const d of small.dependencies.filter((x) => x.distance === 1)) {
      expect(small.truncated).not.toContainEqual({ path: d.path, qualname: d.qualname, reason: 'budget' });
    }
    expect(small.context).toContain('def with_tax');
    expect(small.context).not.toContain('_SLUG_RE =');
    // The dependency list itself is complete either way.
    expect(deps(small)).toEqual(deps(full));
  });
});

describe('dependencies in an application (webapp, mlkit, scripts)', () => {
  it('follows `import a.b` attribute chains, decorators and instances of local classes', async () => {
    const web = await open('webapp');
    const init = web.analyze('app/db/session.py', 'Session.__init__');
    expect(deps(init)).toEqual(['app/config.py::Settings', 'app/config.py::settings', 'app/db/session.py::Session']);
    const list = web.analyze('app/services/users.py', 'UserService.list_users');
    expect(dep(list, 'app/services/base.py::logged')).toMatchObject({ kind: 'function', distance: 1 });
    expect(dep(list, 'app/services/base.py::Service.paginate')).toMatchObject({ kind: 'method', distance: 1 });
    expect(dep(list, 'app/config.py::MAX_PAGE')).toMatchObject({ kind: 'variable', distance: 1 });
    const make = web.analyze('app/services/users.py', 'make_service');
    expect(deps(make)).toEqual(expect.arrayContaining(['app/services/users.py::UserService', 'app/services/users.py::UserService.find', 'app/db/session.py::Session']));
    const count = web.analyze('app/services/users.py', 'count_users');
    expect(dep(count, 'app/db/session.py::session_scope')).toMatchObject({ distance: 1 });
    // `with session_scope() as s`: s is unknown, so Session.query is not claimed.
    expect(dep(count, 'app/db/session.py::Session.query')).toBeUndefined();
  });

  it('reports getattr, dynamic imports and star imports instead of guessing', async () => {
    const ml = await open('mlkit');
    expect(ml.analyze('src/mlkit/models/linear.py', 'LinearModel.dynamic').unresolved).toEqual(['getattr(self, "on_" + name)']);
    expect(ml.analyze('src/mlkit/io/store.py', 'load_plugin').unresolved).toEqual(['importlib.import_module("mlkit.plugins." + name)']);
    const star = RepositoryAnalyzer.fromSources({ 'a.py': 'from os.path import *\n\ndef f(p):\n    return join(p, "x")\n' }).analyze('a.py', 'f');
    expect(star.unresolved).toEqual(['join (star import from os.path?)']);
    const unbound = RepositoryAnalyzer.fromSources({ 'a.py': 'def f(p):\n    return helper(p)\n' }).analyze('a.py', 'f');
    expect(unbound.unresolved).toEqual(['helper']);
  });

  it('resolves a src/ layout, star re-exports of a local package and annotated parameters', async () => {
    const ml = await open('mlkit');
    const fit = ml.analyze('src/mlkit/models/linear.py', 'LinearModel.fit');
    expect(deps(fit)).toEqual(expect.arrayContaining(['src/mlkit/models/linear.py::fit_line', 'src/mlkit/models/base.py::check_array', 'src/mlkit/models/base.py::DEFAULT_TOL', 'src/mlkit/models/base.py::Estimator.fitted']));
    const init = ml.analyze('src/mlkit/models/linear.py', 'LinearModel.__init__');
    expect(deps(init)).toEqual(expect.arrayContaining(['src/mlkit/io/store.py::MemoryStore', 'src/mlkit/models/base.py::Estimator.__init__']));
    const local = RepositoryAnalyzer.fromSources({
      'pkg/__init__.py': 'from .impl import *\n',
      'pkg/impl.py': '__all__ = ["Box"]\n\nclass Box:\n    def size(self, k):\n        return k\n\ndef hidden():\n    return 1\n',
      'use.py': 'from pkg import Box\n\ndef measure(b: Box, k):\n    return b.size(k) + 1\n',
    }).analyze('use.py', 'measure');
    expect(deps(local)).toEqual(['pkg/impl.py::Box', 'pkg/impl.py::Box.size']);
  });

  it('handles function-local imports, lambdas, comprehensions and closures as locals', async () => {
    const scripts = await open('scripts_repo');
    expect(deps(scripts.analyze('stats.py', 'sizes'))).toEqual(['fsutil.py::walk']);
    expect(deps(scripts.analyze('stats.py', 'stdev'))).toEqual(['stats.py::mean']);
    const outer = scripts.analyze('stats.py', 'outer');
    expect(outer.standalone).toBe(true);
    expect(outer.unresolved).toEqual([]);
  });

  it('analyses a function a filter drops, and fails clearly on unknown or skipped ones', async () => {
    const legacy = await open('legacy');
    const use = legacy.analyze('pkg/main.py', 'use');
    expect(deps(use)).toEqual(['pkg/util.py::helper']);
    expect(() => legacy.analyze('pkg/old.py', 'old_style')).toThrow(/pkg\/old.py was skipped: syntax error at line 5: Python 2 print statement/);
    expect(() => legacy.analyze('pkg/main.py', 'nope')).toThrow(/no function nope in pkg\/main.py/);
  });

  it('terminates on import cycles and cyclic class hierarchies', () => {
    const a = RepositoryAnalyzer.fromSources({
      'a.py': 'from b import g\n\nclass A(B2):\n    pass\n\ndef f(x):\n    return g(x)\n\nfrom b import B as B2\n',
      'b.py': 'from a import f, A\n\nclass B(A):\n    def m(self):\n        return self.nothing()\n\ndef g(x):\n    return f(x - 1) if x else 0\n',
    });
    expect(deps(a.analyze('a.py', 'f'))).toEqual(['b.py::g']);
    expect(deps(a.analyze('b.py', 'B.m'))).toEqual(expect.arrayContaining(['b.py::B']));
  });
});

describe('method reachability', () => {
  const repo = RepositoryAnalyzer.fromSources({
    'lib/__init__.py': '',
    'lib/engine.py': [
      'import json',
      '',
      'class Codec:',
      '    def encode(self, value):',
      '        return json.dumps(value)',
      '',
      'class Engine:',
      '    DEFAULT = 3',
      '',
      '    def __init__(self):',
      '        self.codec = Codec()',
      '',
      '    @classmethod',
      '    def build(cls, n):',
      '        engine = cls()',
      '        return engine.run(n or cls.DEFAULT)',
      '',
      '    def run(self, n):',
      '        return self.codec.encode([n])',
      '',
      '    def unused(self):',
      '        return 0',
      '',
      '    class Options:',
      '        def merged(self, other):',
      '            return other',
      '',
      'def configure(extra):',
      '    opts = Engine.Options()',
      '    return opts.merged(extra)',
      '',
    ].join('\n'),
  });

  it('follows cls, instance attributes assigned a local class, and class attributes', () => {
    const a = repo.analyze('lib/engine.py', 'Engine.build');
    expect(deps(a)).toEqual(['lib/engine.py::Codec', 'lib/engine.py::Codec.encode', 'lib/engine.py::Engine', 'lib/engine.py::Engine.__init__', 'lib/engine.py::Engine.run']);
    expect(a.context).not.toContain('def unused');
    expect(a.context).toContain('    DEFAULT = 3');
  });

  it('renders a nested class inside the shell of its outer class', () => {
    const a = repo.analyze('lib/engine.py', 'configure');
    expect(deps(a)).toEqual(['lib/engine.py::Engine', 'lib/engine.py::Engine.Options', 'lib/engine.py::Engine.Options.merged', 'lib/engine.py::Engine.__init__', 'lib/engine.py::Codec'].sort());
    expect(a.context).toContain('class Engine:\n    DEFAULT = 3\n\n    def __init__(self):\n        self.codec = Codec()\n\n    class Options:\n        def merged(self, other):\n            return other\n');
  });
});

describe('scopes', () => {
  it('sees class names in method signatures, comprehension variables in module and class statements, nonlocal names', () => {
    const a = RepositoryAnalyzer.fromSources({
      'm.py': [
        'LIMITS = {k: v for k, v in [("a", 1)]}',
        'SQUARE = lambda q: q * q',
        '',
        'class Box:',
        '    class Info:',
        '        pass',
        '',
        '    sizes = [s * 2 for s in range(3)]',
        '',
        '    def info(self, default: Info = None) -> Info:',
        '        return default or LIMITS',
        '',
        'def counter(start):',
        '    total = start',
        '    def bump(step):',
        '        nonlocal total',
        '        total += step',
        '        return SQUARE(total)',
        '    return bump',
        '',
      ].join('\n'),
    });
    const info = a.analyze('m.py', 'Box.info');
    expect(info.unresolved).toEqual([]);
    expect(deps(info)).toEqual(['m.py::Box', 'm.py::Box.Info', 'm.py::LIMITS']);
    const counter = a.analyze('m.py', 'counter');
    expect(counter.unresolved).toEqual([]);
    expect(deps(counter)).toEqual(['m.py::SQUARE']);
  });
});

describe('annotations', () => {
  const sources = (future: boolean) => ({
    'types_.py': 'class Money:\n    pass\n\nRate = float\n',
    'calc.py': `${future ? 'from __future__ import annotations\n' : ''}from types_ import Money, Rate\n\nDEFAULT = 2\n\ndef convert(m: Money, r: Rate = DEFAULT) -> Money:\n    total: Money = m\n    return total\n`,
  });

  it('needs annotations to run when they are evaluated, not when postponed (PEP 563)', () => {
    const runtime = { contextClosure: false };
    expect(deps(RepositoryAnalyzer.fromSources(sources(false), runtime).analyze('calc.py', 'convert'))).toEqual(['calc.py::DEFAULT', 'types_.py::Money', 'types_.py::Rate']);
    expect(deps(RepositoryAnalyzer.fromSources(sources(true), runtime).analyze('calc.py', 'convert'))).toEqual(['calc.py::DEFAULT']);
  });

  it('the context closure carries what postponed annotations name, since a reader needs them', () => {
    expect(deps(RepositoryAnalyzer.fromSources(sources(true)).analyze('calc.py', 'convert'))).toEqual(['calc.py::DEFAULT', 'types_.py::Money', 'types_.py::Rate']);
  });
});

describe('types a static reader can know', () => {
  const repo = RepositoryAnalyzer.fromSources({
    'svc.py': [
      'from typing import Optional',
      '',
      'class Repo:',
      '    def load(self, k):',
      '        return k',
      '',
      'class Service:',
      '    def __init__(self, repo: Optional["Repo"] = None, cache=None):',
      '        self.repo = repo or Repo()',
      '        self.cache: "Cache" = cache',
      '',
      '    def get(self, k):',
      '        return self.repo.load(k) + self.cache.hit(k)',
      '',
      'def make() -> Service:',
      '    return Service()',
      '',
      'def use(k):',
      '    return make().get(k)',
      '',
      'def use_local(k):',
      '    svc = make()',
      '    return svc.get(k)',
      '',
      'class Cache:',
      '    def hit(self, k):',
      '        return 1',
      '',
      'class Client:',
      '    @property',
      '    def service(self) -> Service:',
      '        return make()',
      '',
      '    def fetch(self, k):',
      '        return self.service.get(k)',
      '',
    ].join('\n'),
  });

  it('follows return annotations, attribute annotations, annotated parameters and `a or C()`', () => {
    const expected = ['svc.py::Cache', 'svc.py::Cache.hit', 'svc.py::Repo', 'svc.py::Repo.load', 'svc.py::Service', 'svc.py::Service.__init__', 'svc.py::Service.get', 'svc.py::make'];
    expect(deps(repo.analyze('svc.py', 'use'))).toEqual(expected);
    expect(deps(repo.analyze('svc.py', 'use_local'))).toEqual(expected);
  });

  it('gives a property read the property\'s return type', () => {
    expect(deps(repo.analyze('svc.py', 'Client.fetch'))).toEqual(expect.arrayContaining(['svc.py::Client.service', 'svc.py::Service.get', 'svc.py::Repo.load']));
  });
});

describe('a repository whose root is the package', () => {
  it('resolves absolute imports through the root package name', () => {
    const a = RepositoryAnalyzer.fromSources(
      {
        '__init__.py': 'from mylib.core import run\n',
        'core.py': 'from mylib import util\nfrom mylib.util import twice\n\ndef run(x):\n    return util.clamp(twice(x))\n',
        'util.py': 'def twice(x):\n    return 2 * x\n\ndef clamp(x):\n    return min(x, 10)\n',
      },
      { repoId: 'someone/mylib' },
    );
    expect(deps(a.analyze('core.py', 'run'))).toEqual(['util.py::clamp', 'util.py::twice']);
  });
});

describe('context blocks', () => {
  it('gives the context per file, and RepoST fenced layout on request', async () => {
    const shop = await open('shop');
    const a = shop.analyze('scripts/report.py', 'main');
    expect(a.contextBlocks.map((b) => b.path)).toEqual(['scripts/helpers.py', 'shop/util/text.py', 'shop/core/pricing.py', 'scripts/report.py']);
    expect(formatContext(a.contextBlocks)).toBe(a.context);
    const fenced = formatContext(a.contextBlocks, { fenced: true });
    expect(fenced.startsWith('```python\n## scripts/helpers.py\ndef fmt(value):\n    return "%.2f" % value\n```\n')).toBe(true);
    expect(fenced.match(/```python\n## /g)).toHaveLength(4);
  });
});
