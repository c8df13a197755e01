/** A failed assertion is named by its line of the evaluation script, its source and its message, not as a bare `AssertionError:`. */
import { describeFailedAssertion, withFailedAssertion } from '../../../activities/eval/failed-assertion';
import type { SampleOutcome } from '../../../activities/eval/outcome';

const SCRIPT = ['def total(xs):', '    return sum(xs)', '', 'def test_total():', '    xs = [1, 2, 3]', '    assert total(xs) == total_new_implementation(xs)', '    assert total([]) == 0, (total([]), 0)', ''].join('\n');

const traceback = (line: number, message: string) =>
  [
    'Traceback (most recent call last):',
    '  File "/work/run/eval_script.py", line 9, in <module>',
    '    test_total()',
    `  File "/work/run/eval_script.py", line ${line}, in test_total`,
    `AssertionError${message ? `: ${message}` : ''}`,
  ].join('\n');

describe('describeFailedAssertion', () => {
  it('names the line, the test function and the assertion, then its message when it has one', () => {
    expect(describeFailedAssertion({ type: 'AssertionError', message: '', traceback: traceback(6, '') }, SCRIPT)).toBe('AssertionError at line 6 in test_total: assert total(xs) == total_new_implementation(xs)');
    expect(describeFailedAssertion({ type: 'AssertionError', message: '(6, 0)', traceback: traceback(7, '(6, 0)') }, SCRIPT)).toBe('AssertionError at line 7 in test_total: assert total([]) == 0, (total([]), 0) ((6, 0))');
  });

  it('is null when no frame is the script, and leaves other outcomes as they are', () => {
    const elsewhere = 'Traceback (most recent call last):\n  File "/usr/lib/python3.12/x.py", line 3, in g\nAssertionError';
    expect(describeFailedAssertion({ type: 'AssertionError', message: '', traceback: elsewhere }, SCRIPT)).toBeNull();
    const failed: SampleOutcome = { passed: false, kind: 'assertion', exceptionType: 'AssertionError', summary: 'AssertionError: ' };
    expect(withFailedAssertion(failed, { type: 'AssertionError', message: '', traceback: elsewhere }, SCRIPT)).toEqual(failed);
    expect(withFailedAssertion(failed, { type: 'AssertionError', message: '', traceback: traceback(6, '') }, SCRIPT).summary).toBe('AssertionError at line 6 in test_total: assert total(xs) == total_new_implementation(xs)');
    const crashed: SampleOutcome = { passed: false, kind: 'exception', exceptionType: 'TypeError', summary: 'TypeError: x' };
    expect(withFailedAssertion(crashed, { type: 'TypeError', message: 'x', traceback: traceback(6, '') }, SCRIPT)).toBe(crashed);
  });
});
