/**
 * One function through RepoST's sandbox testing, each step one activity and each round
 * visible in the history:
 *   prepare -> sandbox (LLM) -> tests (LLM) -> execute with the ground truth as the new implementation
 *   -> up to k debug rounds -> coverage rounds until the threshold -> AST equivalence, LLM
 *   functionality check, LLM test check -> record (accepted, or rejected with stage and reason).
 */
import { ActivityFailure, ApplicationFailure, isCancellation, upsertSearchAttributes } from '@temporalio/workflow';
import type {
  ExecutionSummary,
  FunctionOutcome,
  FunctionRef,
  FunctionStage,
  LlmStepResult,
  PipelineSettings,
  PreparedFunction,
  RunRef,
  TaskQueues,
} from '../activities/contracts';
import { activityProxies } from './activities';
import { FunctionKey, OutcomeKey, RepoKey, RunIdKey, StageKey } from './search-attributes';

export interface FunctionWorkflowInput {
  run: RunRef;
  fn: FunctionRef;
  settings: PipelineSettings;
  queues: TaskQueues;
}

/** Branch coverage when the function has branches, else line coverage (no 100% by decree). */
export function coverageOf(exec: ExecutionSummary): number {
  const c = exec.coverage;
  if (!c) return 0;
  return c.hasBranches && c.branchCoverage !== null ? c.branchCoverage : c.lineCoverage;
}

export async function functionWorkflow(input: FunctionWorkflowInput): Promise<FunctionOutcome> {
  const { run, fn, settings } = input;
  const { io, llm, sandbox } = activityProxies(input.queues);
  upsertSearchAttributes([
    { key: RunIdKey, value: run.runId },
    { key: RepoKey, value: fn.repoId },
    { key: FunctionKey, value: `${fn.path}::${fn.qualname}` },
  ]);

  // What the record needs, filled in as the function moves through the stages.
  const state = {
    tokens: 0,
    debugRounds: 0,
    coverageRounds: 0,
    prepared: null as PreparedFunction | null,
    scriptKey: null as string | null,
    exec: null as ExecutionSummary | null,
    astEquivalent: null as boolean | null,
    functionality: null as string | null,
    testCorrectness: null as string | null,
    promptVersions: {} as Record<string, string>,
  };

  const finish = async (stage: FunctionStage, reason: string): Promise<FunctionOutcome> => {
    const accepted = stage === 'accepted';
    const outcome: FunctionOutcome = {
      functionId: fn.functionId,
      path: fn.path,
      qualname: fn.qualname,
      accepted,
      stage,
      reason,
      debugRounds: state.debugRounds,
      coverageRounds: state.coverageRounds,
      branchCoverage: state.exec?.coverage?.branchCoverage ?? null,
      tokens: state.tokens,
    };
    const { prepared, scriptKey, exec, astEquivalent, functionality, testCorrectness, promptVersions } = state;
    await io.writeRecord({ run, fn, prepared, outcome, scriptKey, execution: exec, astEquivalent, functionality, testCorrectness, promptVersions });
    upsertSearchAttributes([
      { key: OutcomeKey, value: accepted ? 'accepted' : 'rejected' },
      { key: StageKey, value: stage },
    ]);
    return outcome;
  };

  /** Asks again after an unusable answer (parse failure, failed sanity check), a bounded number of times. */
  const withRegeneration = async (step: string, ask: (attempt: number) => Promise<LlmStepResult>) => {
    let last: LlmStepResult | null = null;
    for (let attempt = 0; attempt <= settings.regenerateAttempts; attempt++) {
      last = await ask(attempt);
      state.tokens += last.tokens;
      if (last.ok) {
        state.promptVersions[step] = last.promptVersion;
        return last;
      }
    }
    return last!;
  };

  // An activity that failed for good (retries exhausted, or a non-retryable LLM error such as a
  // bad request) ends the function as a rejection at the stage it reached, with the reason;
  // cancellation still cancels.
  let stage: FunctionStage = 'prepare';
  try {
    // Prepare: the function's source and its local-dependency context, as artifacts.
    const prep = await io.prepareFunction({ fn });
    if (!prep.ok) return finish('prepare', prep.reason);
    const prepared = (state.prepared = prep.prepared);

    // Sandboxing: the function and its local dependencies into one standalone script.
    stage = 'sandbox';
    const sandboxed = await withRegeneration('sandbox', (attempt) => llm.generateSandboxScript({ run, fn, prepared, attempt }));
    if (!sandboxed.ok) return finish('sandbox', `${sandboxed.failure}: ${sandboxed.detail}`);
    const sandboxScriptKey = (state.scriptKey = sandboxed.scriptKey);

    // Test generation: equivalence tests comparing the function with its new implementation.
    stage = 'tests';
    const tested = await withRegeneration('tests', (attempt) => llm.generateTests({ run, fn, prepared, sandboxScriptKey, attempt }));
    if (!tested.ok) return finish('tests', `${tested.failure}: ${tested.detail}`);
    let scriptKey = (state.scriptKey = tested.scriptKey);

    // Execution with the ground truth copied in as `<name>_new_implementation`, then debug rounds.
    stage = 'execute';
    let exec = (state.exec = await sandbox.executeScript({ fn, prepared, scriptKey, coverage: true, installs: tested.installs }));
    while (exec.status !== 'passed' && state.debugRounds < settings.debugRounds) {
      stage = 'debug';
      const round = ++state.debugRounds;
      const fixed: LlmStepResult = await llm.debugScript({ run, fn, prepared, scriptKey, resultKey: exec.resultKey, round });
      state.tokens += fixed.tokens;
      if (!fixed.ok) continue;
      state.promptVersions.debug = fixed.promptVersion;
      scriptKey = state.scriptKey = fixed.scriptKey;
      exec = state.exec = await sandbox.executeScript({ fn, prepared, scriptKey, coverage: true, installs: fixed.installs });
    }
    if (exec.status !== 'passed') {
      const rounds = state.debugRounds;
      return finish(rounds > 0 ? 'debug' : 'execute', `${exec.status} after ${rounds} debug round(s): ${exec.summary}`);
    }

    // Coverage rounds: ask for tests of the missing branches; keep a new script only if it passes
    // and covers more.
    while (coverageOf(exec) < settings.coverageThreshold && state.coverageRounds < settings.coverageRounds) {
      stage = 'coverage';
      const round = ++state.coverageRounds;
      const improved: LlmStepResult = await llm.improveCoverage({ run, fn, prepared, scriptKey, resultKey: exec.resultKey, round });
      state.tokens += improved.tokens;
      if (!improved.ok) continue;
      state.promptVersions.coverage = improved.promptVersion;
      const next: ExecutionSummary = await sandbox.executeScript({ fn, prepared, scriptKey: improved.scriptKey, coverage: true, installs: improved.installs });
      if (next.status === 'passed' && coverageOf(next) > coverageOf(exec)) {
        scriptKey = state.scriptKey = improved.scriptKey;
        exec = state.exec = next;
      }
    }
    const reached = coverageOf(exec);
    if (reached < settings.coverageThreshold) {
      return finish('coverage', `coverage ${reached.toFixed(3)} below ${settings.coverageThreshold} after ${state.coverageRounds} round(s)`);
    }

    // Final checks: AST equivalence, with the LLM functionality check when the trees differ.
    stage = 'ast_check';
    const ast = await sandbox.astCheck({ fn, prepared, scriptKey });
    state.astEquivalent = ast.equivalent;
    if (!ast.equivalent) {
      stage = 'functionality_check';
      const verdict = await llm.checkFunctionality({ run, fn, prepared, scriptKey });
      state.tokens += verdict.tokens;
      if (!verdict.ok) return finish('functionality_check', `${verdict.failure}: ${verdict.detail}`);
      state.promptVersions.check_functionality = verdict.promptVersion;
      state.functionality = verdict.answer;
      if (verdict.answer === 'no') return finish('functionality_check', `sandboxed function differs: ${ast.difference ?? ''} ${verdict.reasoning}`.trim());
    }
    stage = 'test_check';
    const testVerdict = await llm.checkTests({ run, fn, prepared, scriptKey });
    state.tokens += testVerdict.tokens;
    if (!testVerdict.ok) return finish('test_check', `${testVerdict.failure}: ${testVerdict.detail}`);
    state.promptVersions.check_tests = testVerdict.promptVersion;
    state.testCorrectness = testVerdict.answer;
    if (testVerdict.answer !== 'yes') return finish('test_check', `tests judged incorrect: ${testVerdict.reasoning}`);

    return finish('accepted', `coverage ${reached.toFixed(3)}, ${state.debugRounds} debug and ${state.coverageRounds} coverage round(s)`);
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    const cause = err.cause instanceof ApplicationFailure ? `${err.cause.type ?? 'error'}: ${err.cause.message}` : (err.cause?.message ?? err.message);
    return finish(stage, `activity ${err.activityType} failed: ${cause}`);
  }
}
