import { augmentedScript, augmentedTestName, deterministicCases, parseInputCases, scriptWithoutTests } from '../../../activities/eval/augmentation';
import { mergeCandidateTests, splitCandidateTests } from '../../../activities/eval/candidate-tests';
import { outcomeOf } from '../../../activities/eval/outcome';
import { matrixRow, runnerRequest, snippetResults } from '../../../activities/eval/test-runner';
import type { SandboxResult } from '../../../activities/sandbox/schema';

function result(over: Partial<SandboxResult>): SandboxResult {
  return { status: 'error', exitCode: 1, durationMs: 5, stdout: '', stderr: '', truncated: false, exception: null, coverage: null, packages: [], requirements: [], notes: [], ...over };
}

describe('failure kinds of a run', () => {
  it('classifies each status', () => {
    expect(outcomeOf(result({ status: 'passed', exitCode: 0 }))).toEqual({ passed: true, kind: null, exceptionType: null, summary: 'passed' });
    expect(outcomeOf(result({ status: 'failed', exception: { type: 'AssertionError', message: 'x', traceback: '' } }))).toMatchObject({ passed: false, kind: 'assertion', exceptionType: 'AssertionError' });
    expect(outcomeOf(result({ exception: { type: 'IndentationError', message: 'unexpected indent', traceback: '' } }))).toMatchObject({ kind: 'syntax_error', exceptionType: 'IndentationError' });
    expect(outcomeOf(result({ exception: { type: 'TypeError', message: "'NoneType' object is not callable", traceback: '' } }))).toMatchObject({ kind: 'exception', exceptionType: 'TypeError', summary: "TypeError: 'NoneType' object is not callable" });
    expect(outcomeOf(result({ status: 'timeout', exitCode: null, notes: ['the run exceeded its 3s time limit and was killed'] }))).toMatchObject({ kind: 'timeout', summary: 'the run exceeded its 3s time limit and was killed' });
    expect(outcomeOf(result({ status: 'oom', exitCode: 137 }))).toMatchObject({ kind: 'exception', exceptionType: 'MemoryError' });
    expect(outcomeOf(result({ exitCode: 3, stderr: 'bye\n' }))).toMatchObject({ kind: 'exception', exceptionType: 'exit 3', summary: 'bye' });
  });

  it('refuses to call an infrastructure fault an outcome', () => {
    expect(() => outcomeOf(result({ status: 'infrastructure', exitCode: null, notes: ['docker went away'] }))).toThrow(/infrastructure/);
  });
});

describe('candidate tests for ranking', () => {
  it('makes one snippet per assertion, with the setup lines above it', () => {
    const answer = 'Tests:\n```python\nimport math\nbox = Box(2, 3)\nassert box.area() == 6\n# edge\nassert Box(0, 3).area() == 0\nassert math.isclose(Box(0.5, 2).area(), 1.0)\n```';
    expect(splitCandidateTests(answer, 'Box.area')).toEqual([
      'import math\nbox = Box(2, 3)\nassert box.area() == 6',
      'import math\nbox = Box(2, 3)\nassert Box(0, 3).area() == 0',
      'import math\nbox = Box(2, 3)\nassert math.isclose(Box(0.5, 2).area(), 1.0)',
    ]);
  });

  it('turns test functions into one snippet each and drops a redefinition of the target', () => {
    const answer = '```python\ndef clamp(x, lo, hi):\n    return x\n\ndef test_low():\n    assert clamp(-1, 0, 5) == 0\n```';
    expect(splitCandidateTests(answer, 'clamp')).toEqual(['def test_low():\n    assert clamp(-1, 0, 5) == 0\ntest_low()']);
    expect(splitCandidateTests('no tests today', 'clamp')).toEqual([]);
  });

  it('merges answers without duplicates (up to layout), up to a limit', () => {
    expect(mergeCandidateTests([['assert f(1) == 2', 'assert f(2) == 3'], ['assert  f(1)  ==  2', 'assert f(3) == 4']])).toEqual(['assert f(1) == 2', 'assert f(2) == 3', 'assert f(3) == 4']);
    expect(mergeCandidateTests([['a', 'b', 'c']], 2)).toEqual(['a', 'b']);
  });
});

describe('the snippet runner protocol', () => {
  it('builds one run: the evaluation script, and the runner request beside it (no file, no secret)', () => {
    const request = runnerRequest({ mode: 'matrix', script: 'x = 1\n', target: 'f', snippets: ['assert 1', 'assert 0'], snippetTimeoutSec: 5 });
    // The script itself is what the import scan reads and the runner loads as a module.
    expect(request.script).toBe('x = 1\n');
    expect(request.files).toBeUndefined();
    expect(request.runner).toEqual({ mode: 'matrix', target: 'f', snippets: ['assert 1', 'assert 0'], timeoutSec: 5 });
    expect(request.timeoutSec).toBe(25);
    expect(request.install).toBe(true);
  });

  it('reads results from the run\'s runner report; a missing one fails, a load failure fails all', () => {
    const runner = { loadFailure: null, snippets: [{ status: 'pass' as const, detail: '' }, { status: 'fail' as const, detail: 'ZeroDivisionError' }, { status: 'value' as const, detail: '[1, 2]' }] };
    const results = snippetResults({ runner }, 4);
    expect(results).toEqual([{ status: 'pass' }, { status: 'fail', type: 'ZeroDivisionError' }, { status: 'value', repr: '[1, 2]' }, { status: 'missing' }]);
    expect(matrixRow(results)).toBe('1000');
    expect(snippetResults({ runner: { loadFailure: 'SyntaxError', snippets: [] } }, 2)).toEqual([
      { status: 'fail', type: 'SyntaxError' },
      { status: 'fail', type: 'SyntaxError' },
    ]);
    // A refused report (or none at all) gives no result, whatever the run printed.
    expect(snippetResults({ runner: null }, 2)).toEqual([{ status: 'missing' }, { status: 'missing' }]);
  });
});

describe('test augmentation', () => {
  it('reads input cases that end in an expression, without duplicates', () => {
    const answer = '```python\n# case\nclamp(5, 0, 10)\n# case\nv = -3\nclamp(v, 0, 10)\n# case\nx = 1\n# case\nclamp(5, 0, 10)\n```';
    expect(parseInputCases(answer)).toEqual(['clamp(5, 0, 10)', 'v = -3\nclamp(v, 0, 10)']);
  });

  it('keeps a case only when every run gave the same value', () => {
    const cases = ['a()', 'b()', 'c()'];
    const runs = [
      [{ status: 'value', repr: '1' }, { status: 'value', repr: '0.31' }, { status: 'fail', type: 'KeyError' }],
      [{ status: 'value', repr: '1' }, { status: 'value', repr: '0.77' }, { status: 'fail', type: 'KeyError' }],
    ] as const;
    expect(deterministicCases(cases, runs.map((r) => [...r]))).toEqual([{ source: 'a()', expected: '1' }]);
    expect(() => deterministicCases(cases, [[]])).toThrow(/two runs/);
  });

  const script = 'def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n\n\ndef test_clamp():\n    assert clamp(1, 0, 2) == clamp_new_implementation(1, 0, 2)\n\n\nif __name__ == "__main__":\n    test_clamp()\n';

  it('shows the model the script without its tests', () => {
    expect(scriptWithoutTests(script)).toBe('def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n');
  });

  it('adds the test before the main block and calls it first there', () => {
    const out = augmentedScript(script, 'clamp', [{ source: 'clamp(-5, 0, 10)', expected: '0' }]);
    expect(out.indexOf(`def ${augmentedTestName('clamp')}():`)).toBeGreaterThan(out.indexOf('def test_clamp'));
    expect(out).toContain('if __name__ == "__main__":\n    test_clamp_augmented()\n    test_clamp()\n');
    expect(out).toContain('("clamp(-5, 0, 10)", "0"),');
    expect(out).toContain('_owner = _sys.modules[__name__]');
    const method = augmentedScript('class A:\n    def f(self):\n        return 1\n', 'A.f', [{ source: 'A().f()', expected: '1' }]);
    expect(method).toContain('_owner = A\n');
    expect(method.endsWith('if __name__ == "__main__":\n    test_f_augmented()\n')).toBe(true);
  });
});
