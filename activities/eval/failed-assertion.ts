/**
 * A failed assertion as a user can act on it: where it is in the evaluation script (the innermost
 * frame of the script in the traceback), its source line, and its message when it has one (the
 * values compared, which the harness puts there in an isolated run: repost_assert_values.py):
 * `AssertionError at line 12 in test_sort: assert f(x) == f_new_implementation(x) (expected
 * [1, 2], got [2, 1])` instead of a bare `AssertionError:`. A class evaluation's tests run through
 * the harness's test runner, which reports the place and message itself (describeFailureAt).
 */
import type { PythonException } from '../sandbox/schema';
import { scriptFrames } from './assertions';
import type { SampleOutcome } from './outcome';

/** Where a failure stopped in the script (the innermost frame there: its 1-based line and function) and its message. */
export interface FailurePlace {
  type: string;
  line: number;
  function: string;
  message: string;
}

/** The description of a failure at a known place of `script` (the script that ran). */
export function describeFailureAt(place: FailurePlace, script: string): string {
  const source = script.split('\n')[place.line - 1]?.trim();
  const message = place.message.trim();
  return `${place.type} at line ${place.line} in ${place.function}${source ? `: ${source}` : ''}${message ? ` (${message})` : ''}`.slice(0, 300);
}

/** The assertion's description, or null when the traceback passes through no line of the script. */
export function describeFailedAssertion(exception: PythonException, script: string): string | null {
  const frame = scriptFrames(exception.traceback).pop();
  if (!frame) return null;
  return describeFailureAt({ type: exception.type, line: frame.line, function: frame.name, message: exception.message }, script);
}

/** The outcome of a failed assertion, its summary naming the assertion (`script`: the script that ran); any other outcome as it is. */
export function withFailedAssertion(outcome: SampleOutcome, exception: PythonException | null, script: string): SampleOutcome {
  if (outcome.kind !== 'assertion' || !exception) return outcome;
  return { ...outcome, summary: describeFailedAssertion(exception, script) ?? outcome.summary };
}
