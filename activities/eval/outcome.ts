/**
 * What one sample came to: passed, or failed with a kind. The kinds follow what a reader of
 * RepoST's results asks: was there code at all, did it parse, did it give wrong answers (an
 * assertion of the equivalence tests failed), did it crash (with which exception), or hang; and
 * one that is not the model's: the harness failed it (`harness.ts`), which is reported apart and
 * never counted against the model.
 */
import { CANDIDATE_FAILURE_KINDS, type SandboxResult } from '../sandbox/schema';

/**
 * Beside the classic kinds, the ways a candidate in its own process (an isolated run) can fail
 * it: ending its process, sending a value the harness does not decode, breaking the protocol,
 * or returning another type than the ground truth on the same call. Each is reported apart from a
 * wrong value (`assertion`).
 */
export const FAILURE_KINDS = ['no_code', 'syntax_error', 'assertion', 'exception', 'timeout', ...CANDIDATE_FAILURE_KINDS, 'harness'] as const;
/** The kinds that are the model's: every one but `harness`. */
export const MODEL_FAILURE_KINDS = FAILURE_KINDS.filter((k) => k !== 'harness');
export type FailureKind = (typeof FAILURE_KINDS)[number];

export interface SampleOutcome {
  passed: boolean;
  /** null when passed. */
  kind: FailureKind | null;
  /** The exception type for `exception` (and `syntax_error`), e.g. `TypeError`. */
  exceptionType: string | null;
  /** One line for the record and the report. */
  summary: string;
}

const SYNTAX_ERRORS = new Set(['SyntaxError', 'IndentationError', 'TabError']);

export function noCodeOutcome(detail: string): SampleOutcome {
  return { passed: false, kind: 'no_code', exceptionType: null, summary: detail.slice(0, 300) };
}

/** A failure the harness caused (`harness.ts` says why): the sample is not counted against the model. */
export function harnessOutcome(cause: string, exceptionType: string | null = null): SampleOutcome {
  return { passed: false, kind: 'harness', exceptionType, summary: cause.slice(0, 300) };
}

/** Classifies a finished run; `infrastructure` is not an outcome (the run is retried instead). */
export function outcomeOf(result: SandboxResult): SampleOutcome {
  const exc = result.exception;
  // A wrong type is the run's reason only when the tests themselves passed; a wrong value that is also of
  // another type stays a wrong value (the candidate's other failures explain the run whatever the tests did).
  const candidateReason = result.candidate && !(result.candidate.kind === 'wrong_type' && exc);
  if (candidateReason && result.candidate && result.status !== 'passed' && result.status !== 'infrastructure') {
    return { passed: false, kind: result.candidate.kind, exceptionType: null, summary: result.candidate.detail.slice(0, 300) };
  }
  const line = exc ? `${exc.type}: ${exc.message}`.slice(0, 300) : lastLine(result);
  switch (result.status) {
    case 'passed':
      return { passed: true, kind: null, exceptionType: null, summary: 'passed' };
    case 'timeout':
      return { passed: false, kind: 'timeout', exceptionType: null, summary: result.notes.find((n) => /time limit/.test(n)) ?? 'timed out' };
    case 'oom':
      return { passed: false, kind: 'exception', exceptionType: 'MemoryError', summary: line || 'out of memory' };
    case 'failed':
      return { passed: false, kind: 'assertion', exceptionType: exc?.type ?? 'AssertionError', summary: line || 'a test assertion failed' };
    case 'error':
      if (exc && SYNTAX_ERRORS.has(exc.type)) return { passed: false, kind: 'syntax_error', exceptionType: exc.type, summary: line };
      return { passed: false, kind: 'exception', exceptionType: exc?.type ?? `exit ${result.exitCode ?? '?'}`, summary: line || `exit code ${result.exitCode ?? '?'}` };
    case 'infrastructure':
      throw new Error(`a sandbox infrastructure failure is not a sample outcome: ${result.notes.join('; ')}`);
  }
}

function lastLine(result: SandboxResult): string {
  return ((result.stderr.trim() || result.stdout.trim()).split('\n').pop() ?? '').slice(0, 300);
}
