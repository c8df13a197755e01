import * as fs from 'node:fs';
import { checkSandboxScript, checkTestScript, countCodeTokens } from '../../../activities/llm/sanity';
import { REPOST_SAMPLE } from '../../support/fixtures';

interface RepostRecord {
  func_name: string;
  orig_func: string;
  orig_context: string;
  eval_script: string;
}
const records = fs
  .readFileSync(REPOST_SAMPLE, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as RepostRecord);

const ORIGINAL = `def clip(x, lo, hi):
    """Clamp x into [lo, hi]."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x
`;

const SANDBOXED = `import math

${ORIGINAL}`;

const WITH_TESTS = `${SANDBOXED}

def test_clip():
    assert clip(5, 0, 10) == clip_new_implementation(5, 0, 10)
    assert clip(-1, 0, 10) == clip_new_implementation(-1, 0, 10)
    assert clip(11, 0, 10) == clip_new_implementation(11, 0, 10)

if __name__ == "__main__":
    test_clip()
`;

const failedChecks = (r: { failures: { check: string }[] }) => r.failures.map((f) => f.check).sort();

describe('token counting', () => {
  it('ignores comments and whitespace, and counts a string literal as one token', () => {
    expect(countCodeTokens('x = 1')).toBe(3);
    expect(countCodeTokens('x   =   1  # set x\n\n')).toBe(3);
    expect(countCodeTokens('s = """a long\ndocstring with words"""')).toBe(3);
    expect(countCodeTokens('```python\n## pkg/a.py\nx = 1\n```')).toBe(3);
  });

  it('finds functions and methods by qualified name', () => {
    const code = 'class A:\n    @staticmethod\n    def f():\n        return 1\n\ndef f():\n    return 2\n';
    expect(checkSandboxScript({ functionName: 'A.f', originalFunction: 'def f():\n    return 1\n', context: '', script: code }).passed).toBe(true);
    expect(checkSandboxScript({ functionName: 'B.f', originalFunction: 'def f():\n    return 1\n', context: '', script: code }).failures[0]!.check).toBe('target_exists');
  });
});

describe('sandbox sanity checks (RepoST Table 11)', () => {
  it('accepts a faithful script', () => {
    const report = checkSandboxScript({ functionName: 'clip', originalFunction: ORIGINAL, context: `## m.py\n${ORIGINAL}`, script: SANDBOXED });
    expect(report).toMatchObject({ passed: true, failures: [] });
    expect(report.measures.sandboxedFunctionTokens).toBe(report.measures.originalFunctionTokens);
  });

  it('rejects a script without the target', () => {
    const report = checkSandboxScript({ functionName: 'clip', originalFunction: ORIGINAL, context: ORIGINAL, script: 'def other():\n    return 1\n' });
    expect(failedChecks(report)).toEqual(['target_exists']);
  });

  it('rejects a gutted target function', () => {
    const gutted = 'def clip(x, lo, hi):\n    return x\n';
    expect(failedChecks(checkSandboxScript({ functionName: 'clip', originalFunction: ORIGINAL + '\n'.repeat(3) + 'y = [' + '1, '.repeat(10) + '1]\n', context: '', script: gutted }))).toContain('target_not_shrunk');
  });

  it('rejects a script that dropped most of the context it was given', () => {
    const helpers = Array.from({ length: 10 }, (_, i) => `def helper_${i}(a, b):\n    return a * ${i} + b\n`).join('\n');
    const report = checkSandboxScript({ functionName: 'clip', originalFunction: ORIGINAL, context: `## m.py\n${ORIGINAL}\n## h.py\n${helpers}`, script: SANDBOXED });
    expect(failedChecks(report)).toEqual(['script_keeps_context']);
  });

  it('reports a script that does not parse', () => {
    expect(failedChecks(checkSandboxScript({ functionName: 'clip', originalFunction: ORIGINAL, context: '', script: SANDBOXED + '\ndef broken(:\n' }))).toContain('parses');
  });
});

describe('test-generation sanity checks (RepoST Table 12)', () => {
  const base = { functionName: 'clip', originalFunction: ORIGINAL, sandboxScript: SANDBOXED };

  it('accepts a well-formed test script', () => {
    const report = checkTestScript({ ...base, script: WITH_TESTS });
    expect(report.passed).toBe(true);
    expect(report.measures.assertions).toBe(3);
  });

  it.each([
    ['no test function', WITH_TESTS.replace(/def test_clip/, 'def check_clip'), ['test_function_exists']],
    ['test never calls the new implementation', WITH_TESTS.replace(/clip_new_implementation/g, 'clip'), ['test_calls_new_implementation']],
    ['test never calls the target', WITH_TESTS.replace(/assert clip\(/g, 'assert max('), ['test_calls_target']],
    ['fewer than 3 assertions', WITH_TESTS.replace(/    assert clip\(11.*\n/, ''), ['test_has_assertions']],
    ['no main block', WITH_TESTS.replace(/if __name__[\s\S]*$/, ''), ['main_block_exists']],
    ['main does not call the test', WITH_TESTS.replace(/    test_clip\(\)\n$/, '    print("hi")\n'), ['main_calls_test']],
    ['main swallows failures', WITH_TESTS.replace(/    test_clip\(\)\n$/, '    try:\n        test_clip()\n    except AssertionError:\n        pass\n'), ['main_call_not_in_try']],
  ])('rejects: %s', (_label, script, expected) => {
    expect(failedChecks(checkTestScript({ ...base, script }))).toEqual(expected);
  });

  it('rejects a script with fewer tokens than the sandboxed script it extends', () => {
    const richer = SANDBOXED + Array.from({ length: 60 }, (_, i) => `CONSTANT_${i} = ${i}\n`).join('');
    expect(failedChecks(checkTestScript({ ...base, sandboxScript: richer, script: WITH_TESTS }))).toEqual(['script_not_shrunk']);
  });

  it('accepts the main block written with single quotes or reversed comparison', () => {
    const script = WITH_TESTS.replace('if __name__ == "__main__":', "if '__main__' == __name__:");
    expect(checkTestScript({ ...base, script }).passed).toBe(true);
  });
});

describe('the test-calls rule: literal (RepoST) or reachable', () => {
  const base = { functionName: 'clip', originalFunction: ORIGINAL, sandboxScript: SANDBOXED };
  const main = '\nif __name__ == "__main__":\n    test_clip()\n';
  const script = (tests: string) => `${SANDBOXED}\n${tests}${main}`;
  const checks = (tests: string, testCalls?: 'literal' | 'reachable') => failedChecks(checkTestScript({ ...base, script: script(tests), testCalls }));

  const HELPER = `def _same(reference, candidate, *args):
    return reference(*args) == candidate(*args)


def test_clip():
    assert _same(clip, clip_new_implementation, 5, 0, 10)
    assert _same(clip, clip_new_implementation, -1, 0, 10)
    assert _same(clip, clip_new_implementation, 11, 0, 10)
`;
  const HELPER_BY_KEYWORD = `def _same(args, reference=None, candidate=None):
    expected = reference(*args)
    return expected == candidate(*args)


def test_clip():
    assert _same((5, 0, 10), candidate=clip_new_implementation, reference=clip)
    assert _same((-1, 0, 10), reference=clip, candidate=clip_new_implementation)
    assert _same((11, 0, 10), reference=clip, candidate=clip_new_implementation)
`;
  const LOOP = `def test_clip():
    for args in [(5, 0, 10), (-1, 0, 10), (11, 0, 10)]:
        results = []
        for impl in (clip, clip_new_implementation):
            results.append(impl(*args))
        assert results[0] == results[1]
    assert results
    assert len(results) == 2
`;
  const COMPREHENSION_AND_PAIRS = `def test_clip():
    for args in [(5, 0, 10), (-1, 0, 10), (11, 0, 10)]:
        outs = {label: impl(*args) for label, impl in [("old", clip), ("new", clip_new_implementation)]}
        assert outs["old"] == outs["new"]
    assert True
    assert True
`;
  const NESTED_HELPER_OVER_A_COLLECTION = `def test_clip():
    implementations = [clip, clip_new_implementation]

    def agree(impls, *args):
        values = [f(*args) for f in impls]
        return values[0] == values[1]

    assert agree(implementations, 5, 0, 10)
    assert agree(implementations, -1, 0, 10)
    assert agree(implementations, 11, 0, 10)
`;
  const HELPER_CALLS_BY_NAME = `def _check(*args):
    assert clip(*args) == clip_new_implementation(*args)


def test_clip():
    _check(5, 0, 10)
    _check(-1, 0, 10)
    _check(11, 0, 10)
    assert True
    assert True
    assert True
`;

  it.each([
    ['a helper the two are passed to', HELPER],
    ['a helper taking them by keyword', HELPER_BY_KEYWORD],
    ['a loop over a tuple of the two', LOOP],
    ['a comprehension over (label, implementation) pairs', COMPREHENSION_AND_PAIRS],
    ['a nested helper looping over a list of the two', NESTED_HELPER_OVER_A_COLLECTION],
    ['a helper that calls both by name', HELPER_CALLS_BY_NAME],
  ])('literal refuses, reachable accepts: %s', (_label, tests) => {
    expect(checks(tests, 'literal')).toEqual(expect.arrayContaining(['test_calls_target', 'test_calls_new_implementation']));
    expect(checks(tests)).toEqual(checks(tests, 'literal'));
    expect(checks(tests, 'reachable')).toEqual([]);
  });

  it.each([
    [
      'the helper is given the target but never calls it',
      `def _same(reference, candidate, *args):
    return candidate(*args) is not None


def test_clip():
    assert _same(clip, clip_new_implementation, 5, 0, 10)
    assert _same(clip, clip_new_implementation, -1, 0, 10)
    assert _same(clip, clip_new_implementation, 11, 0, 10)
`,
      ['test_calls_target'],
    ],
    [
      'the loop leaves the new implementation out',
      `def test_clip():
    for impl in (clip,):
        assert impl(5, 0, 10) == 5
        assert impl(-1, 0, 10) == 0
        assert impl(11, 0, 10) == 10
`,
      ['test_calls_new_implementation'],
    ],
    [
      'the new implementation only goes to a function the script does not define',
      `def test_clip():
    assert list(map(clip_new_implementation, [5], [0], [10])) == [clip(5, 0, 10)]
    assert clip(-1, 0, 10) == 0
    assert clip(11, 0, 10) == 10
`,
      ['test_calls_new_implementation'],
    ],
    [
      'a helper of the script that is never called',
      `def _same(reference, candidate, *args):
    return reference(*args) == candidate(*args)


def test_clip():
    pair = (clip, clip_new_implementation)
    assert pair
    assert len(pair) == 2
    assert pair[0] is clip
`,
      // `is clip` judges the implementation's identity, not its behaviour: refused too.
      ['test_calls_new_implementation', 'test_calls_target', 'tests_read_implementation'],
    ],
  ])('reachable still refuses: %s', (_label, tests, expected) => {
    expect(checks(tests, 'reachable')).toEqual(expected);
  });

  it('follows a method of the test’s class through self', () => {
    const tests = `class TestClip:
    def _same(self, a, b, *args):
        return a(*args) == b(*args)

    def test_clip(self):
        assert self._same(clip, clip_new_implementation, 5, 0, 10)
        assert self._same(clip, clip_new_implementation, -1, 0, 10)
        assert self._same(clip, clip_new_implementation, 11, 0, 10)
`;
    const checks = (testCalls: 'literal' | 'reachable') =>
      failedChecks(checkTestScript({ ...base, testCalls, script: `${SANDBOXED}\n${tests}\nif __name__ == "__main__":\n    TestClip().test_clip()\n` }));
    expect(checks('literal')).toEqual(['test_calls_new_implementation', 'test_calls_target']);
    expect(checks('reachable')).toEqual([]);
  });

  it('is bounded on recursive helpers', () => {
    const tests = `def _loop(a, b, n):
    return _loop(b, a, n - 1) if n else True


def test_clip():
    assert _loop(clip, clip_new_implementation, 3)
    assert True
    assert True
`;
    expect(checks(tests, 'reachable')).toEqual(['test_calls_new_implementation', 'test_calls_target']);
  });

  it('reachable accepts whatever literal accepts, on RepoST’s published records', () => {
    for (const r of records) {
      const input = { functionName: r.func_name, originalFunction: r.orig_func, sandboxScript: r.eval_script, script: r.eval_script };
      expect(checkTestScript({ ...input, testCalls: 'reachable' }).failures).toEqual(checkTestScript(input).failures);
    }
  });
});

describe('RepoST published records', () => {
  it(`pass both check tables (all ${records.length})`, () => {
    const failing = records
      .map((r) => ({
        name: r.func_name,
        sandbox: checkSandboxScript({ functionName: r.func_name, originalFunction: r.orig_func, context: r.orig_context, script: r.eval_script }),
        tests: checkTestScript({ functionName: r.func_name, originalFunction: r.orig_func, sandboxScript: r.eval_script, script: r.eval_script }),
      }))
      .filter((x) => !x.sandbox.passed || !x.tests.passed)
      .map((x) => `${x.name}: ${[...x.sandbox.failures, ...x.tests.failures].map((f) => f.detail).join('; ')}`);
    expect(records.length).toBe(40);
    expect(failing).toEqual([]);
  });
});
