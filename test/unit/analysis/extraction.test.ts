/** Function extraction details, the candidate filters, ids and the seeded selection. */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { analyzeRepository, functionId, RepositoryAnalyzer, selectCandidates, type FunctionEntry } from '../../../activities/analysis';

const REPOS = path.resolve(__dirname, '../../fixtures/repos');
const byQual = (fs: FunctionEntry[], path: string, q: string) => fs.filter((f) => f.path === path && f.qualname === q);

describe('extraction', () => {
  it('records signature, docstring, decorators, span, returns and the exact source', async () => {
    const { functions } = await analyzeRepository(path.join(REPOS, 'webapp'));
    const [list] = byQual(functions, 'app/services/users.py', 'UserService.list_users');
    expect(list).toMatchObject({
      name: 'list_users',
      kind: 'method',
      startLine: 15, // the decorator line
      endLine: 20,
      signature: 'def list_users(self, page=0)',
      docstring: 'Return one page of user names.',
      decorators: ['logged()'],
      returns: true,
      kept: true,
      droppedBy: null,
    });
    expect(list!.source.split('\n')[0]).toBe('    @logged()');
    expect(list!.source.split('\n')).toHaveLength(6);
    const [scope] = byQual(functions, 'app/db/session.py', 'session_scope');
    expect(scope).toMatchObject({ returns: false, decorators: ['contextlib.contextmanager'], droppedBy: 'no-return' });
  });

  it('names nested classes, multi-line signatures, async functions, BOMs, CRLF and tabs', async () => {
    const scripts = (await analyzeRepository(path.join(REPOS, 'scripts_repo'))).functions;
    expect(byQual(scripts, 'stats.py', 'Shape.Kind.Detail.depth')).toHaveLength(1);
    expect(byQual(scripts, 'stats.py', 'Shape.area')[0]!.signature).toBe('def area(self, scale=1)');
    expect(byQual(scripts, 'stats.py', 'Shape.unit')[0]!.decorators).toEqual(['staticmethod', 'functools_cache']);
    // Functions nested in functions (and classes inside them) are not candidates.
    expect(scripts.filter((f) => /inner|innermost|Local/.test(f.qualname))).toEqual([]);
    const ml = (await analyzeRepository(path.join(REPOS, 'mlkit'))).functions;
    expect(byQual(ml, 'src/mlkit/io/store.py', 'fetch_remote')[0]).toMatchObject({ signature: 'async def fetch_remote(url, session)', droppedBy: 'keyword:async' });
    const legacy = (await analyzeRepository(path.join(REPOS, 'legacy'))).functions;
    const bom = byQual(legacy, 'pkg/crlf.py', 'bom')[0]!;
    expect(bom).toMatchObject({ startLine: 1, endLine: 3, docstring: 'Has a BOM and CRLF.' });
    expect(bom.source).toBe('def bom(x):\n    """Has a BOM and CRLF."""\n    return x');
    expect(byQual(legacy, 'pkg/crlf.py', 'K.tabbed')[0]!.source).toBe('\tdef tabbed(self, y):\n\t\treturn y');
    expect(byQual(legacy, 'pkg/declared.py', 'greet2')[0]!.docstring).toBe('Saüdation.');
  });

  it('skips what Python 3 cannot read, with a reason', async () => {
    const { skipped } = await analyzeRepository(path.join(REPOS, 'legacy'));
    expect(skipped).toEqual([
      { path: 'pkg/broken.py', reason: 'syntax error at line 1 (not valid Python 3)' },
      { path: 'pkg/escape.py', reason: 'symlink points outside the repository' },
      { path: 'pkg/latin.py', reason: 'not valid UTF-8 text' },
      { path: 'pkg/neq.py', reason: "syntax error at line 2: Python 2 '<>' operator" },
      { path: 'pkg/octal.py', reason: 'syntax error at line 2: Python 2 integer literal 0777' },
      { path: 'pkg/old.py', reason: 'syntax error at line 5: Python 2 print statement' },
      { path: 'pkg/py2_backtick.py', reason: 'syntax error at line 2: Python 2 backtick repr' },
      { path: 'pkg/py2_except.py', reason: "syntax error at line 4: Python 2 'except E, name' clause" },
      { path: 'pkg/py2_raise.py', reason: "syntax error at line 2: Python 2 'raise E, message' statement" },
      { path: 'pkg/py2_tupleparam.py', reason: 'syntax error at line 1: Python 2 tuple parameter' },
      { path: 'pkg/py2_ur.py', reason: 'syntax error at line 1: Python 2 ur string prefix' },
      { path: 'pkg/sibling.py', reason: 'symlink points outside the repository' },
    ]);
  });
});

describe('candidate filters', () => {
  const src = (body: string) => RepositoryAnalyzer.fromSources({ 'm.py': body }).functions();
  const droppedBy = (body: string) => src(body).map((f) => f.droppedBy);

  it('names the rule that dropped each function', () => {
    expect(droppedBy('def f():\n    x = 1\n    return x\n')).toEqual(['no-arguments']);
    expect(droppedBy('def f(a):\n    print(a)\n    a += 1\n')).toEqual(['no-return']);
    expect(droppedBy('def f(a):\n    """Doc."""\n    return None\n')).toEqual(['trivial-body']);
    expect(droppedBy('def f(a):\n    """Doc."""\n    raise NotImplementedError\n')).toEqual(['no-return']);
    expect(droppedBy('class A:\n    def __eq__(self, o):\n        x = o\n        return x\n')).toEqual(['dunder']);
    expect(droppedBy('class A:\n    def m(self):\n        x = 1\n        return x\n')).toEqual(['no-arguments']);
    expect(droppedBy('class A:\n    @staticmethod\n    def m(a):\n        x = a\n        return x\n')).toEqual([null]);
    expect(droppedBy('def f(a):\n    return a\n')).toEqual(['too-short']);
    expect(droppedBy(`def f(a):\n${'    a += 1\n'.repeat(250)}    return a\n`)).toEqual(['too-long']);
    expect(droppedBy('def f(a):\n    x = a.cuda()\n    return x\n')).toEqual(['keyword:gpu']);
    expect(droppedBy('def f(a):\n    import boto3\n    return boto3.client(a)\n')).toEqual(['keyword:cloud']);
    expect(droppedBy('def f(a):\n    plt.plot(a)\n    return a\n')).toEqual(['keyword:plotting']);
    expect(droppedBy('def f(a):\n    p = multiprocessing.Pool(a)\n    return p\n')).toEqual(['keyword:multiprocessing']);
    expect(droppedBy('def f(a):\n    v = sys.argv[a]\n    return v\n')).toEqual(['keyword:cli']);
    expect(droppedBy('class TestX:\n    def m(self, a):\n        x = a\n        return x\n')).toEqual(['test-code']);
    expect(RepositoryAnalyzer.fromSources({ 'tests/test_m.py': 'def f(a):\n    x = a\n    return x\n' }).functions()[0]!.droppedBy).toBe('test-file');
    expect(droppedBy('def f(a):\n    x = a\n    return x\n\ndef f(a, b):\n    x = a + b\n    return x\n')).toEqual(['shadowed', null]);
  });

  it('gives shadowed definitions ids of their own, so ids stay unique with the shadowed rule off', () => {
    const source = 'def f(a):\n    x = a\n    return x\n\ndef f(a, b):\n    x = a + b\n    return x\n\ndef f(a, b, c):\n    x = a + b + c\n    return x\n';
    const analyzer = RepositoryAnalyzer.fromSources({ 'm.py': source }, { rules: { noShadowed: false }, commit: 'c1' });
    const fns = analyzer.functions();
    expect(fns.map((f) => f.kept)).toEqual([true, true, true]);
    expect(fns.map((f) => f.occurrence)).toEqual([2, 1, 0]);
    expect(new Set(fns.map((f) => f.id)).size).toBe(3);
    // The bound (last) definition keeps the plain id; each id analyses its own definition.
    expect(fns[2]!.id).toBe(functionId('memory', 'c1', 'm.py', 'f'));
    expect(analyzer.analyze('m.py', 'f', 1).source).toContain('def f(a, b):');
    expect(analyzer.analyze('m.py', 'f').source).toContain('def f(a, b, c):');
  });

  it('lets every rule be switched off', () => {
    const fns = RepositoryAnalyzer.fromSources(
      { 'm.py': 'def f():\n    return 1\n\nclass A:\n    def __eq__(self, o):\n        return o\n' },
      { rules: { requireArguments: false, noTrivialLiteral: false, sizeLimits: false, noDunder: false } },
    ).functions();
    expect(fns.map((f) => f.droppedBy)).toEqual([null, null]);
    const needDoc = RepositoryAnalyzer.fromSources({ 'm.py': 'def f(a):\n    x = a\n    return x\n' }, { rules: { requireDocstring: true } }).functions();
    expect(needDoc[0]!.droppedBy).toBe('no-docstring');
    const extra = RepositoryAnalyzer.fromSources({ 'm.py': 'def f(a):\n    x = requests.get(a)\n    return x\n' }, { extraKeywords: ['requests.'] }).functions();
    expect(extra[0]!.droppedBy).toBe('keyword:requests.');
  });
});

describe('ids and selection', () => {
  it('derives ids from repository, commit, path and qualified name', async () => {
    const expected = createHash('sha256').update('acme/shop@abc123:shop/core/cart.py::Cart.total').digest('hex').slice(0, 16);
    expect(functionId('acme/shop', 'abc123', 'shop/core/cart.py', 'Cart.total')).toBe(expected);
    const { functions } = await analyzeRepository(path.join(REPOS, 'shop'), { repoId: 'acme/shop', commit: 'abc123' });
    expect(byQual(functions, 'shop/core/cart.py', 'Cart.total')[0]!.id).toBe(expected);
  });

  it('selects at most N kept functions, deterministically by seed, in file order', async () => {
    const sources: Record<string, string> = {};
    for (let i = 0; i < 40; i++) sources[`m${String(i).padStart(2, '0')}.py`] = `def f${i}(a):\n    x = a * ${i}\n    return x\n\ndef g${i}():\n    return 1\n`;
    const fns = RepositoryAnalyzer.fromSources(sources, { repoId: 'r' }).functions();
    expect(fns.filter((f) => f.kept)).toHaveLength(40);
    const a = selectCandidates(fns, 30, 7);
    expect(a).toHaveLength(30);
    expect(a.every((f) => f.kept)).toBe(true);
    expect(selectCandidates(fns, 30, 7).map((f) => f.id)).toEqual(a.map((f) => f.id));
    expect(selectCandidates(fns, 30, 8).map((f) => f.id)).not.toEqual(a.map((f) => f.id));
    expect(a.map((f) => f.path)).toEqual([...a.map((f) => f.path)].sort());
    // Stable under reordering of the input and under unrelated additions.
    expect(selectCandidates([...fns].reverse(), 30, 7).map((f) => f.id).sort()).toEqual(a.map((f) => f.id).sort());
    expect(selectCandidates(fns, 100, 7)).toHaveLength(40);
  });
});

describe('openCached', () => {
  it('parses an immutable snapshot once for many analyses', async () => {
    const dir = path.join(REPOS, 'shop');
    const a = await RepositoryAnalyzer.openCached(dir, { repoId: 'x' });
    const b = await RepositoryAnalyzer.openCached(dir, { repoId: 'x' });
    const c = await RepositoryAnalyzer.openCached(dir, { repoId: 'y' });
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    expect(c.functions()[0]!.id).not.toBe(a.functions()[0]!.id);
  });
});

describe('candidates', () => {
  it('applies maxFunctionsPerRepo and seed from the options', () => {
    const sources: Record<string, string> = {};
    for (let i = 0; i < 12; i++) sources[`m${i}.py`] = `def f${i}(a):\n    x = a * ${i}\n    return x\n`;
    const a = RepositoryAnalyzer.fromSources(sources, { maxFunctionsPerRepo: 5, seed: 3 });
    expect(a.candidates()).toHaveLength(5);
    expect(a.candidates().map((f) => f.id)).toEqual(selectCandidates(a.functions(), 5, 3).map((f) => f.id));
  });
});

describe('keyword filters', () => {
  const dropped = (body: string) => RepositoryAnalyzer.fromSources({ 'm.py': body }).functions()[0]!.droppedBy;
  it('do not fire on look-alike names', () => {
    expect(dropped('def trace(ray, s3_bucket):\n    hit = ray.origin + 1\n    return hit, s3_bucket\n')).toBeNull();
    expect(dropped('def pool_size(ConnectionPool):\n    n = ConnectionPool.size\n    return n\n')).toBeNull();
    expect(dropped('def start(cfg):\n    ray.init(cfg)\n    return cfg\n')).toBe('keyword:multiprocessing');
  });
});
