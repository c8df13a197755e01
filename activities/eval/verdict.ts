/**
 * One candidate's verdict: its run in the sandbox (isolated: in a process of its own) and what
 * the run came to. The evaluation's `runCandidate` and the verification server both go through
 * `runPlaced`, so an answer gets the same verdict from either; `verifyAnswer` starts from a
 * model's whole answer, as a sample of an evaluation does.
 */
import { type RunHooks, type RunLimits, type SandboxExecutor, type SandboxResult } from '../sandbox';
import { extractCandidate } from './candidate';
import type { EvalRecord } from './dataset';
import { harnessCause } from './harness';
import { withFailedAssertion } from './failed-assertion';
import { noCodeOutcome, harnessOutcome, outcomeOf, type SampleOutcome } from './outcome';
import { placeCandidateCode, type Placed } from './placement';

export interface CandidateRunOptions {
  timeoutSec: number;
  limits: RunLimits;
}

/**
 * Runs a placed candidate with the record's packages. The outcome is null when the sandbox
 * itself failed (`infrastructure`): that is no verdict, and the caller runs it again.
 */
export async function runPlaced(executor: Pick<SandboxExecutor, 'run'>, record: EvalRecord, placed: Extract<Placed, { ok: true }>, options: CandidateRunOptions, hooks: RunHooks = {}): Promise<{ result: SandboxResult; outcome: SampleOutcome | null }> {
  const result = await executor.run(
    { script: placed.script, candidate: placed.candidate, install: true, requirements: record.requirements, localModules: [...placed.names.ownModules], timeoutSec: options.timeoutSec, limits: options.limits },
    hooks,
  );
  if (result.status === 'infrastructure') return { result, outcome: null };
  // A failure the harness caused (a repository module the script replaces, a name the prompt promised) is not the model's.
  const cause = harnessCause(result, placed.names, placed);
  // A failed assertion is named by its line of the script that ran, not as a bare `AssertionError:`.
  return { result, outcome: cause ? harnessOutcome(cause, result.exception?.type ?? null) : withFailedAssertion(outcomeOf(result), result.exception, placed.script) };
}

export interface AnswerVerdict {
  outcome: SampleOutcome;
  /** The run's result; null when the answer never ran (no code, or it could not be placed). */
  result: SandboxResult | null;
}

/**
 * A model's answer (text with a code block, or the definition itself) checked as an evaluation
 * checks a sample: the candidate taken from it, placed in the record's script in a process of its
 * own, run. `infrastructure`: the sandbox failed and there is no verdict.
 */
export async function verifyAnswer(executor: Pick<SandboxExecutor, 'run'>, record: EvalRecord, answer: string, options: CandidateRunOptions, hooks: RunHooks = {}): Promise<AnswerVerdict | { infrastructure: SandboxResult }> {
  const candidate = extractCandidate(answer, record);
  if (!candidate.ok) return { outcome: noCodeOutcome(candidate.detail), result: null };
  const placed = placeCandidateCode(record, candidate, true);
  if (!placed.ok) return { outcome: placed.outcome, result: null };
  const { result, outcome } = await runPlaced(executor, record, placed, options, hooks);
  return outcome ? { outcome, result } : { infrastructure: result };
}
