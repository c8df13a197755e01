/**
 * A failed assertion as a user can act on it: where it is in the evaluation script (the innermost
 * frame of the script in the traceback), its source line, and its message when it has one (the
 * values compared, which the harness puts there in an isolated run: repost_assert_values.py):
 * `AssertionError at line 12 in test_sort: assert f(x) == f_new_implementation(x) (expected
 * [1, 2], got [2, 1])` instead of a bare `AssertionError:`.
 */
import type { PythonException } from '../sandbox/schema';
import { scriptFrames } from './assertions';
import type { SampleOutcome } from './outcome';

/** The assertion's description, or null when the traceback passes through no line of the script. */
export function describeFailedAssertion(exception: PythonException, script: string): string | null {
  const frame = scriptFrames(exception.traceback).pop();
  if (!frame) return null;
  const source = script.split('\n')[frame.line - 1]?.trim();
  const message = exception.message.trim();
  return `${exception.type} at line ${frame.line} in ${frame.name}${source ? `: ${source}` : ''}${message ? ` (${message})` : ''}`.slice(0, 300);
}

/** The outcome of a failed assertion, its summary naming the assertion (`script`: the script that ran); any other outcome as it is. */
export function withFailedAssertion(outcome: SampleOutcome, exception: PythonException | null, script: string): SampleOutcome {
  if (outcome.kind !== 'assertion' || !exception) return outcome;
  return { ...outcome, summary: describeFailedAssertion(exception, script) ?? outcome.summary };
}
