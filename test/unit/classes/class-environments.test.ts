/**
 * The pure parts of class environments: the class filters (each a named rule, counted), the
 * class analysis, the class copy as `<Class>_new_implementation`, the class sanity checks, the
 * class summary, and the class-level evaluation's scoring.
 */
import { classSelectionCounts, RepositoryAnalyzer, selectClassCandidates } from '../../../activities/analysis';
import { ClassSummaryBuilder } from '../../../activities/dataset/class-summary';
import {
  classCandidateScript,
  classRepairMessage,
  classRunOutcome,
  classTestResults,
  contextModules,
  contextWithoutClass,
  extractClassCandidate,
  scoreClassSample,
  summarizeClassEval,
  unrunnableSample,
  type ClassEvalResult,
} from '../../../activities/eval/class-eval';
import { checkClassSandboxScript, checkClassTestScript, testFunctionNames } from '../../../activities/llm/sanity';
import { renamedClassCopy, withNewClassImplementation } from '../../../activities/sandbox';
import type { ClassDatasetRecord } from '../../../activities/store/records';

const KEPT = `class Account:
    """A balance."""

    def __init__(self, balance=0):
        self.balance = balance

    def deposit(self, amount):
        if amount <= 0:
            raise ValueError("positive amounts only")
        self.balance += amount
        return self.balance

    def withdraw(self, amount):
        if amount > self.balance:
            raise ValueError("insufficient")
        self.balance -= amount
        return self.balance
`;

const SOURCES: Record<string, string> = {
  'bank/account.py': KEPT,
  // shadowed: the first Pair is replaced by the second; nested: Outer.Inner.
  'bank/pairs.py': `class Pair:
    def __init__(self, a):
        self.a = a

    def first(self):
        return self.a

    def swap(self):
        return Pair(self.a)

class Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def first(self):
        return self.a

    def second(self):
        return self.b

    def swap(self):
        return Pair(self.b, self.a)

    class Inner:
        def one(self):
            return 1
`,
  'bank/base.py': `import abc


class Store(abc.ABC):
    @abc.abstractmethod
    def get(self, key):
        pass

    @abc.abstractmethod
    def put(self, key, value):
        pass

    def keys(self):
        raise NotImplementedError


class Tiny:
    def __init__(self):
        self.x = 1

    def get(self):
        return self.x
`,
  'bank/plots.py': `import matplotlib.pyplot as plt


class Chart:
    def __init__(self, values):
        self.values = values

    def total(self):
        return sum(self.values)

    def peak(self):
        return max(self.values)

    def draw(self):
        plt.plot(self.values)
        return len(self.values)
`,
  'tests/test_account.py': `class TestAccount:
    def setup(self):
        self.n = 1

    def test_a(self):
        assert self.n == 1

    def test_b(self):
        assert self.n + 1 == 2
`,
};

describe('class filters: each a named rule with its count', () => {
  const analyzer = RepositoryAnalyzer.fromSources(SOURCES, { repoId: 'bank', commit: 'c0' });
  const candidates = analyzer.classCandidates();
  const rule = (qualname: string, occurrence = 0) => candidates.find((c) => c.info.qualname === qualname && c.info.occurrence === occurrence)!.droppedBy;

  it('drops each class by the first rule that applies and keeps the rest', () => {
    expect(rule('Account')).toBeNull();
    // Python binds the last Pair (occurrence 0); the earlier one (occurrence 1) is shadowed.
    expect(rule('Pair', 1)).toBe('shadowed');
    expect(rule('Pair', 0)).toBeNull();
    expect(rule('Pair.Inner')).toBe('nested');
    expect(rule('TestAccount')).toBe('test-class');
    expect(rule('Store')).toBe('abstract-only');
    expect(rule('Tiny')).toBe('methods');
    expect(rule('Chart')).toBe('keywords');
    const counts = classSelectionCounts(candidates);
    expect(counts).toEqual({ found: 8, kept: 2, droppedBy: { shadowed: 1, nested: 1, 'test-class': 1, 'abstract-only': 1, 'output-only': 0, methods: 1, size: 0, keywords: 1 } });
  });

  it('switches a rule off, and applies the size limits', () => {
    const lenient = RepositoryAnalyzer.fromSources(SOURCES, { repoId: 'bank', commit: 'c0', classRules: { keywords: false, methodCount: false }, maxClassLines: 12 });
    const by = Object.fromEntries(lenient.classCandidates().map((c) => [`${c.info.qualname}#${c.info.occurrence}`, c.droppedBy]));
    expect(by['Chart#0']).toBe('size');
    // With the methods rule off, the next rule that applies drops Tiny (6 lines).
    expect(by['Tiny#0']).toBe('size');
    expect(by['Account#0']).toBe('size');
  });

  it('samples at most the cap, seeded, in source order', () => {
    const kept = candidates.filter((c) => c.kept);
    expect(selectClassCandidates(candidates, 10, 0)).toEqual(kept);
    const one = selectClassCandidates(candidates, 1, 0);
    expect(one).toHaveLength(1);
    expect(selectClassCandidates(candidates, 1, 0)).toEqual(one);
  });

  it("analyses a whole class: its methods, source, skeleton and the context of what they use", () => {
    const a = analyzer.analyzeClass('bank/account.py', 'Account');
    expect(a.methods).toEqual(['__init__', 'deposit', 'withdraw']);
    expect(a.source).toBe(KEPT.trimEnd());
    expect(a.skeleton).toContain('def deposit(self, amount):');
    expect(a.documentation).toBe('partial');
    expect(a.standalone).toBe(true);
    expect(a.context).toContain('## bank/account.py');
    expect(() => analyzer.analyzeClass('bank/pairs.py', 'Pair.Inner')).toThrow(/nested class/);
  });
});

describe('the class copy and the class sanity checks', () => {
  it('renames the class and its own references, not attributes or keyword names', () => {
    const copy = renamedClassCopy(
      'class Node(Base):\n    def clone(self):\n        return Node(self.v, Node=1)\n\n    def up(self):\n        return super(Node, self).up() or self.Node\n',
      'Node',
    );
    expect(copy).toContain('class Node_new_implementation(Base):');
    expect(copy).toContain('return Node_new_implementation(self.v, Node=1)');
    expect(copy).toContain('super(Node_new_implementation, self).up() or self.Node');
  });

  it('puts the copy before the tests', () => {
    const script = 'class A:\n    def f(self):\n        return 1\n\n\ndef test_A():\n    assert A().f() == A_new_implementation().f()\n';
    const out = withNewClassImplementation(script, 'class A:\n    def f(self):\n        return 1\n', 'A');
    expect(out.indexOf('class A_new_implementation:')).toBeGreaterThan(out.indexOf('class A:'));
    expect(out.indexOf('class A_new_implementation:')).toBeLessThan(out.indexOf('def test_A'));
  });

  const original = KEPT;
  const tests = `${KEPT}

def test_Account_deposit():
    a = Account(5)
    b = Account_new_implementation(5)
    assert a.deposit(3) == b.deposit(3)
    assert a.balance == b.balance


def test_Account_withdraw():
    a = Account(5)
    b = Account_new_implementation(5)
    assert a.withdraw(2) == b.withdraw(2)


if __name__ == "__main__":
    test_Account_deposit()
    test_Account_withdraw()
`;

  it('accepts tests that build both classes and call every test from __main__', () => {
    const report = checkClassTestScript({ className: 'Account', originalClass: original, methods: 3, script: tests, sandboxScript: KEPT });
    expect(report.failures).toEqual([]);
    expect(testFunctionNames(tests)).toEqual(['test_Account_deposit', 'test_Account_withdraw']);
  });

  it('refuses tests that never build the copy, leave a test uncalled, or a class cut short', () => {
    const noCopy = tests.replace(/Account_new_implementation\(5\)/g, 'Account(5)');
    expect(checkClassTestScript({ className: 'Account', originalClass: original, methods: 3, script: noCopy, sandboxScript: KEPT }).failures.map((f) => f.check)).toContain('test_calls_new_implementation');
    const uncalled = tests.replace('    test_Account_withdraw()\n', '');
    expect(checkClassTestScript({ className: 'Account', originalClass: original, methods: 3, script: uncalled, sandboxScript: KEPT }).failures.map((f) => f.check)).toContain('main_calls_test');
    const cut = KEPT.slice(0, KEPT.indexOf('    def withdraw'));
    const sandbox = checkClassSandboxScript({ className: 'Account', originalClass: original, methods: 1, script: cut, context: '' });
    expect(sandbox.failures.map((f) => f.check)).toContain('target_not_shrunk');
  });
});

const record = (over: Partial<ClassDatasetRecord>): ClassDatasetRecord =>
  ({ class_id: 'x', class_name: 'Account', repo_name: 'bank', class_path: 'bank/account.py', split: 'train', documentation_level: 'partial', metrics: {}, test_functions: ['test_a', 'test_b'], ...over }) as ClassDatasetRecord;

describe('class-level evaluation scoring', () => {
  it("takes the class from an answer, with its imports but not the repository's own", () => {
    const answer = 'Here it is.\n\n```python\nimport math\nfrom bank.util import helper\nfrom .x import y\n\n\nclass Other:\n    pass\n\n\nclass Account:\n    def f(self):\n        return math.pi\n```\n';
    const c = extractClassCandidate(answer, 'Account', contextModules('## bank/util.py\nX = 1\n'));
    expect(c).toEqual({ ok: true, code: 'class Account:\n    def f(self):\n        return math.pi', preamble: 'import math' });
    expect(extractClassCandidate('```python\nclass Other:\n    pass\n```', 'Account')).toEqual({ ok: false, detail: 'the answer defines Other but not the class Account' });
    expect(extractClassCandidate('no code here', 'Account').ok).toBe(false);
  });

  it('places the answer in a module of its own (its process), a stub as the copy, and shows the model the context without the class', () => {
    const script = `${KEPT}\n\ndef test_a():\n    assert Account(1).balance == Account_new_implementation(1).balance\n`;
    const answer = KEPT.replace('"""A balance."""', '"""A balance."""\n    # the answer');
    const placed = classCandidateScript(script, { ok: true, code: answer, preamble: 'import math' }, 'Account');
    expect(placed.candidate).toMatchObject({ target: 'Account', kind: 'class' });
    expect(placed.candidate.module.startsWith('import math\n')).toBe(true);
    expect(placed.candidate.module).toContain('# the answer');
    expect(placed.candidate.module).not.toContain('def test_a');
    expect(placed.script).toContain('class Account_new_implementation(__repost_candidate__.stub_base()):');
    expect(placed.script).not.toContain('# the answer');
    const context = `## bank/util.py\nX = 1\n\n## bank/account.py\nimport os\n\n${KEPT}\nY = 2\n`;
    const shown = contextWithoutClass(context, KEPT)!;
    expect(shown).toContain('import os');
    expect(shown).toContain('Y = 2');
    expect(shown).not.toContain('def deposit');
    expect(contextWithoutClass('## a.py\nX = 1\n', KEPT)).toBeNull();
  });

  it('scores per test, Pass@k over whole classes, and stratifies by documentation and metric quartile', () => {
    const sim = { bleu: 1, rougeL: 1, tsed: 1 };
    const all = (id: string, level: 'full' | 'none', methods: number, passes: boolean[][]): ClassEvalResult => ({
      ...record({ class_id: id, documentation_level: level, metrics: { methods, code_lines: methods * 10 } }),
      samples: passes.map((p, s) =>
        scoreClassSample(
          s,
          p.map((ok, i) => ({ test: `test_${i}`, passed: ok, failure: ok ? null : 'AssertionError' })),
          sim,
        ),
      ),
    });
    const results = [
      all('a', 'full', 3, [[true, true], [true, false]]),
      all('b', 'full', 4, [[true, false], [false, false]]),
      all('c', 'none', 8, [[true, true], [true, true]]),
      { ...record({ class_id: 'd', documentation_level: 'none', metrics: { methods: 9 } }), samples: [unrunnableSample(0, ['test_0', 'test_1'], 'no class'), unrunnableSample(1, ['test_0', 'test_1'], 'no class')] },
    ];
    expect(results[0]!.samples[1]).toMatchObject({ passedTests: 1, passRate: 0.5, passed: false });
    const s = summarizeClassEval(results, [1, 2, 5]);
    expect(s.samplesPerClass).toBe(2);
    // pass@1: a 1/2, b 0, c 1, d 0 -> 0.375; pass@2: a 1, b 0, c 1, d 0 -> 0.5; pass@5 needs 5 samples: left out.
    expect(s.overall.passAtK).toEqual({ 'pass@1': 0.375, 'pass@2': 0.5 });
    expect(s.overall.testPassRate).toBeCloseTo((0.75 + 0.25 + 1 + 0) / 4, 4);
    expect(s.byDocumentation.full).toMatchObject({ classes: 2, passAtK: { 'pass@1': 0.25 } });
    expect(s.byDocumentation.none).toMatchObject({ classes: 2, passAtK: { 'pass@1': 0.5 } });
    const methods = s.byMetricQuartile.find((q) => q.metric === 'methods')!;
    expect(methods.bounds).toEqual([3, 4, 8, 9]);
    expect(methods.quartiles.map((q) => q.passAtK['pass@1'])).toEqual([0.5, 0, 1, 0]);
    // A class without the metric is left out of its quartiles.
    expect(s.byMetricQuartile.find((q) => q.metric === 'code_lines')!.quartiles.reduce((n, q) => n + q.classes, 0)).toBe(3);
  });
});

describe('class evaluation through its workflow: runs, repairs and cost', () => {
  it("reads each test function's result from the runner, names the run's failure kind, and tells a repair which tests failed", () => {
    const tests = classTestResults([{ status: 'pass' }, { status: 'fail', type: 'AssertionError' }, { status: 'value', repr: 'None' }, { status: 'missing' }], ['test_a', 'test_b', 'test_c', 'test_d']);
    expect(tests.map((t) => [t.test, t.passed, t.failure])).toEqual([
      ['test_a', true, null],
      ['test_b', false, 'AssertionError'],
      ['test_c', true, null],
      ['test_d', false, 'missing'],
    ]);
    expect(classRunOutcome(tests)).toMatchObject({ passed: false, kind: 'assertion', exceptionType: 'AssertionError' });
    expect(classRunOutcome(tests).summary).toBe('2 of 4 test(s) failed: test_b (AssertionError), test_d (missing)');
    expect(classRunOutcome(tests.slice(0, 1))).toMatchObject({ passed: true, kind: null });
    expect(classRunOutcome([{ test: 'test_x', passed: false, failure: 'KeyError' }])).toMatchObject({ passed: false, kind: 'exception', exceptionType: 'KeyError' });
    // No test at all is no pass.
    expect(classRunOutcome([]).passed).toBe(false);
    expect(classRepairMessage(tests)).toBe('test_a: passed\ntest_b: failed (raised AssertionError)\ntest_c: passed\ntest_d: failed (no result: the process ended first)');
    expect(classRepairMessage(tests, 'the class could not be placed in the script: no class')).toBe('the class could not be placed in the script: no class');
  });

  it("names a failed assertion by the runner's place and message, with the source line of the script that ran", () => {
    const script = 'def test_total():\n    cart = Cart([2, 3])\n    assert cart.total() == Cart_new_implementation([2, 3]).total()\n';
    const tests = classTestResults(
      [
        { status: 'fail', type: 'TypeError' },
        { status: 'fail', type: 'AssertionError', assertion: { line: 3, function: 'test_total', message: 'expected 5, got 6' } },
      ],
      ['test_a', 'test_total'],
      script,
    );
    expect(tests[0]).toEqual({ test: 'test_a', passed: false, failure: 'TypeError' });
    expect(tests[1]!.assertion).toBe('AssertionError at line 3 in test_total: assert cart.total() == Cart_new_implementation([2, 3]).total() (expected 5, got 6)');
    const outcome = classRunOutcome(tests);
    expect(outcome).toMatchObject({ kind: 'assertion', exceptionType: 'AssertionError' });
    expect(outcome.summary).toBe(`2 of 2 test(s) failed; ${tests[1]!.assertion}; failed: test_a (TypeError), test_total (AssertionError)`);
    expect(classRepairMessage(tests)).toBe(`test_a: failed (raised TypeError)\ntest_total: failed (${tests[1]!.assertion})`);
  });

  it('reports Pass@k after each repair round and adds up what the classes cost', () => {
    const usage = (calls: number, cached: number, cost: number) => ({ calls, cachedCalls: cached, promptTokens: 10 * calls, cachedPromptTokens: 0, completionTokens: 5 * calls, costUsd: cost, latencyMs: 0 });
    const test = (ok: boolean) => [{ test: 'test_0', passed: ok, failure: ok ? null : 'AssertionError' }];
    const fixed = { round: 1, error: null, tests: test(true), passedTests: 1, passRate: 1, passed: true, similarity: null };
    const results: ClassEvalResult[] = [
      // Fails at first, passes after its first repair.
      { ...record({ class_id: 'a' }), samples: [{ ...scoreClassSample(0, test(false), null), repairs: [fixed], usage: usage(2, 0, 0.5) }], usage: usage(2, 0, 0.5) },
      // Fails at first and after both repairs.
      { ...record({ class_id: 'b' }), samples: [{ ...scoreClassSample(0, test(false), null), repairs: [{ ...fixed, tests: test(false), passedTests: 0, passRate: 0, passed: false }, { ...fixed, round: 2, tests: test(false), passedTests: 0, passRate: 0, passed: false }], usage: usage(3, 1, 0.25) }], usage: usage(3, 1, 0.25) },
      // Could not be evaluated: no sample, no cost.
      { ...record({ class_id: 'c' }), samples: [], error: "the class's workflow failed: boom" },
    ];
    const s = summarizeClassEval(results, [1], { repairRounds: 2, model: 'm' });
    expect(s.overall.passAtK).toEqual({ 'pass@1': 0 });
    expect(s.passAtKByRound).toEqual([{ 'pass@1': 0 }, { 'pass@1': 0.5 }, { 'pass@1': 0.5 }]);
    expect(s.usage).toMatchObject({ calls: 5, cachedCalls: 1, promptTokens: 50, completionTokens: 25, costUsd: 0.75 });
    expect(s.errors).toEqual([{ class_id: 'c', error: "the class's workflow failed: boom" }]);
    expect(s.model).toBe('m');
    // Without repairs asked for, one round: the first answers.
    expect(summarizeClassEval(results.slice(2), [1]).passAtKByRound).toHaveLength(1);
  });
});

describe('the class part of a run summary', () => {
  it('adds the filters of every repository, the funnel and the per-split figures', () => {
    const b = new ClassSummaryBuilder();
    b.addRepository({ classSelection: { found: 5, kept: 2, sampled: 2, droppedBy: { methods: 2, size: 1 } } });
    b.addRepository({ classSelection: { found: 3, kept: 1, sampled: 1, droppedBy: { methods: 1, keywords: 1 } } });
    b.addRepository({});
    b.addAccepted({ ...record({}), orig_class: 'class A:\n    pass\n', eval_script: 'a\nb\nc\n', methods: ['f', 'g'], coverage_rate: 1, method_coverage: [{ method: 'f', rate: 1, line_rate: 1, branch_rate: null, has_branches: false }, { method: 'g', rate: 0.5, line_rate: 0.5, branch_rate: 0.5, has_branches: true }] } as ClassDatasetRecord);
    b.addRejected('train', 'functionality_check');
    b.addRejected('eval', 'debug');
    const r = b.result();
    expect(r.selection).toEqual({ found: 8, kept: 3, sampled: 3, droppedBy: { methods: 3, size: 1, keywords: 1 } });
    expect(r).toMatchObject({ classes: 3, accepted: 1, rejected: 2, rejectedAt: { functionality_check: 1, debug: 1 }, bySplit: { train: { accepted: 1, rejected: 1 }, eval: { accepted: 0, rejected: 1 } } });
    expect(r.statistics.train).toMatchObject({ classes: 1, avgMethods: 2, avgClassLines: 2, avgEvalScriptLines: 3, avgTestFunctions: 2, avgCoverage: 1, avgMethodsFullyCovered: 0.5, documentation: { full: 0, partial: 1, none: 0 } });
  });
});
