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
