/**
 * A dataset is untrusted input: a record whose own script binds the name the harness places the
 * answer under would judge its own version instead of the answer, so it is refused as the
 * harness's (not the model's) failure, for the ground truth and for any answer.
 */
import { toEvalRecord } from '../../../activities/eval/dataset';
import { placeCandidateCode } from '../../../activities/eval/placement';

const record = (evalScript: string, funcName = 'double') =>
  toEvalRecord({
    func_name: funcName,
    idx: '1',
    repo_name: 'example/repo',
    func_path: 'pkg/mod.py',
    orig_func: 'def double(x):\n    return 2 * x\n',
    orig_context: '',
    eval_script: evalScript,
  });

const honest = ['def double(x):', '    return 2 * x', '', 'def test_double():', '    assert double(3) == double_new_implementation(3)', '', 'if __name__ == "__main__":', '    test_double()', ''].join('\n');

describe('records that define the placed name themselves', () => {
  test('an honest record places the answer (isolated and in-script)', () => {
    const answer = { code: 'def double(x):\n    return x + x\n', preamble: '' };
    expect(placeCandidateCode(record(honest), answer as never, true).ok).toBe(true);
    expect(placeCandidateCode(record(honest), null, true).ok).toBe(true);
  });

  test.each([
    ['a def after the tests', honest.replace('if __name__', 'def double_new_implementation(*a, **k):\n    return double(*a, **k)\n\nif __name__')],
    ['an assignment under the main guard', honest.replace('    test_double()', '    double_new_implementation = double\n    test_double()')],
    ['an import', `from pkg.mod import double as double_new_implementation\n${honest}`],
  ])('%s: refused as the harness\'s failure, whatever the answer', (_, script) => {
    const answer = { code: 'def double(x):\n    return 0\n', preamble: '' };
    for (const placed of [placeCandidateCode(record(script), answer as never, true), placeCandidateCode(record(script), null, true), placeCandidateCode(record(script), answer as never, false)]) {
      expect(placed.ok).toBe(false);
      if (placed.ok) continue;
      expect(placed.outcome.passed).toBe(false);
      expect(placed.outcome.summary).toMatch(/the record's own script defines double_new_implementation/);
    }
  });
});
