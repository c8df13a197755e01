/**
 * One function through RepoST's sandbox testing, each step one activity and each round
 * visible in the history:
 *   prepare -> sandbox (LLM) -> tests (LLM) -> execute with the ground truth as the new implementation
 *   -> up to k debug rounds -> coverage rounds until the threshold
 *   -> [stability check] -> [mutation score, mutation rounds until the minimum score]
 *   -> AST equivalence, LLM functionality check, LLM test check
 *   -> for an evaluation record, solvability: can a model implement it from its prompt
 *   (workflows/solvability.ts) -> record (accepted, or rejected with stage and reason).
 * An evaluation-split function needs the evaluation thresholds (full coverage, equal ASTs). The
 * bracketed stages run when the run's settings ask for them (`loops.stability`, `loops.mutation`).
 */
import { ActivityFailure, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type {
  ExecutionSummary,
  FunctionOutcome,
  FunctionRef,
  FunctionStage,
  LlmStepResult,
  MutationScore,
  PipelineSettings,
  PreparedFunction,
  PreviousAnswer,
  RecordThresholds,
  RunRef,
  StabilityVerdict,
  SolvabilityResult,
  TaskQueues,
} from '../activities/contracts';
import { activityProxies } from './activities';
import { activityFailureReason } from './failures';
import { boundedKeyword } from './ids';
import { PIPELINE_PRIORITY } from './priorities';
import { FunctionKey, OutcomeKey, RepoKey, RunIdKey, SplitKey, StageKey } from './search-attributes';
import { solvabilityStage } from './solvability';
import { targetDetails, targetNoun, workflowKind } from './target-kinds';

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

/** What the function must reach: the evaluation split's thresholds, or the training split's. */
export function thresholdsFor(fn: FunctionRef, settings: PipelineSettings): RecordThresholds {
  const m = settings.mutation;
  const mutationScore = m?.enabled ? (fn.split === 'eval' ? m.evalMinScore : m.minScore) : null;
  return fn.split === 'eval'
    ? { coverage: settings.evalCoverageThreshold, astCheckRequired: settings.evalRequiresAstMatch, mutationScore }
    : { coverage: settings.coverageThreshold, astCheckRequired: false, mutationScore };
}

/** A mutation score below the minimum; a script with no mutant to kill has nothing to fall short of. */
export function belowMinScore(m: MutationScore, minScore: number): boolean {
  return m.status === 'scored' && m.score! < minScore;
}

/** What an unusable answer was, to tell the model on the next attempt. */
function previousOf(result: LlmStepResult): PreviousAnswer | undefined {
  return !result.ok && result.exchangeKey ? { exchangeKey: result.exchangeKey, failure: result.failure, detail: result.detail } : undefined;
}

export async function functionWorkflow(input: FunctionWorkflowInput): Promise<FunctionOutcome> {
  const { run, fn, settings } = input;
  const { io, llm, sandbox } = activityProxies(input.queues, settings);
  const P = PIPELINE_PRIORITY;
  const thresholds = thresholdsFor(fn, settings);
  const coverageThreshold = thresholds.coverage;
  upsertSearchAttributes([
    { key: RunIdKey, value: boundedKeyword(run.runId) },
    { key: RepoKey, value: boundedKeyword(fn.repoId) },
    { key: FunctionKey, value: boundedKeyword(`${fn.path}::${fn.qualname}`) },
    { key: SplitKey, value: fn.split },
  ]);

  // What the record needs, filled in as the function moves through the stages.
  const state = {
    tokens: 0,
    debugRounds: 0,
    coverageRounds: 0,
    mutationRounds: 0,
    prepared: null as PreparedFunction | null,
    scriptKey: null as string | null,
    exec: null as ExecutionSummary | null,
    astEquivalent: null as boolean | null,
    functionality: null as string | null,
    testCorrectness: null as string | null,
    solvability: null as SolvabilityResult | null,
    promptVersions: {} as Record<string, string>,
    mutation: null as MutationScore | null,
    stability: null as StabilityVerdict | null,
  };

  /**
   * What the Temporal UI shows for a running function (where it is, how the last step went), and
   * its stage as a search attribute, so progress views can count running functions by stage.
   */
  let shownStage: FunctionStage | null = null;
  const noun = targetNoun(fn);
  const progress = (stage: FunctionStage, detail: string) => {
    setCurrentDetails(targetDetails(fn, stage, detail));
    if (stage !== shownStage) {
      shownStage = stage;
      upsertSearchAttributes([{ key: StageKey, value: stage }]);
    }
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
      ...(state.mutationRounds > 0 ? { mutationRounds: state.mutationRounds } : {}),
      branchCoverage: state.exec?.coverage?.branchCoverage ?? null,
      tokens: state.tokens,
    };
    const { prepared, scriptKey, exec, astEquivalent, functionality, testCorrectness, solvability, promptVersions, mutation, stability } = state;
    await io.writeRecord({ run, fn, thresholds, prepared, outcome, scriptKey, execution: exec, astEquivalent, functionality, testCorrectness, solvability, promptVersions, mutation, stability });
    upsertSearchAttributes([{ key: OutcomeKey, value: accepted ? 'accepted' : 'rejected' }]);
    progress(stage, accepted ? `accepted: ${reason}` : `rejected: ${reason.slice(0, 300)}`);
    return outcome;
  };

  /**
   * Asks again after an unusable answer (parse failure, failed sanity check), a bounded number of
   * times; each new attempt shows the model its previous answer and what was wrong with it.
   */
  const withRegeneration = async (step: string, ask: (attempt: number, previous: PreviousAnswer | undefined) => Promise<LlmStepResult>) => {
    let last: LlmStepResult | null = null;
    for (let attempt = 0; attempt <= settings.regenerateAttempts; attempt++) {
      last = await ask(attempt, last ? previousOf(last) : undefined);
      state.tokens += last.tokens;
      if (last.ok) {
        state.promptVersions[step] = last.promptVersion;
        return last;
      }
      progress(step as FunctionStage, `attempt ${attempt + 1} unusable: ${last.failure}`);
    }
    return last!;
  };

  // An activity that failed for good (retries exhausted, or a non-retryable LLM error such as a
  // bad request) ends the function as a rejection at the stage it reached, with the reason;
  // cancellation still cancels.
  let stage: FunctionStage = 'prepare';
  try {
    // Prepare: the function's source and its local-dependency context, as artifacts.
    progress(stage, 'static analysis');
    const prep = await io.prepareFunction({ run, fn });
    if (!prep.ok) return await finish('prepare', prep.reason);
    const prepared = (state.prepared = prep.prepared);

    // Sandboxing: the function and its local dependencies into one standalone script.
    stage = 'sandbox';
    progress(stage, 'writing the standalone script');
    const sandboxed = await withRegeneration('sandbox', (attempt, previous) => llm(P.sandbox).generateSandboxScript({ run, fn, prepared, attempt, previous }));
    if (!sandboxed.ok) return await finish('sandbox', `${sandboxed.failure}: ${sandboxed.detail}`);
    const sandboxScriptKey = (state.scriptKey = sandboxed.scriptKey);

    // Test generation: equivalence tests comparing the function with its new implementation.
    stage = 'tests';
    progress(stage, 'writing equivalence tests');
    const tested = await withRegeneration('tests', (attempt, previous) => llm(P.tests).generateTests({ run, fn, prepared, sandboxScriptKey, attempt, previous }));
    if (!tested.ok) return await finish('tests', `${tested.failure}: ${tested.detail}`);
    let scriptKey = (state.scriptKey = tested.scriptKey);
    // The install lines that came with the script in use (the runs after execution take them again).
    let installs = tested.installs;

    // Execution with the ground truth copied in as `<name>_new_implementation`, then debug rounds.
    stage = 'execute';
    progress(stage, 'running the script with the ground truth');
    let exec = (state.exec = await sandbox(P.tests).executeScript({ run, fn, prepared, scriptKey, coverage: true, installs: tested.installs }));
    let previous: PreviousAnswer | undefined;
    while (exec.status !== 'passed' && state.debugRounds < settings.debugRounds) {
      stage = 'debug';
      const round = ++state.debugRounds;
      progress(stage, `round ${round}: ${exec.summary.slice(0, 200)}`);
      const fixed: LlmStepResult = await llm(P.debug).debugScript({ run, fn, prepared, scriptKey, resultKey: exec.resultKey, round, previous });
      state.tokens += fixed.tokens;
      previous = previousOf(fixed);
      if (!fixed.ok) continue;
      state.promptVersions.debug = fixed.promptVersion;
      scriptKey = state.scriptKey = fixed.scriptKey;
      installs = fixed.installs;
      exec = state.exec = await sandbox(P.debug).executeScript({ run, fn, prepared, scriptKey, coverage: true, installs });
    }
    if (exec.status !== 'passed') {
      const rounds = state.debugRounds;
      return await finish(rounds > 0 ? 'debug' : 'execute', `${exec.status} after ${rounds} debug round(s): ${exec.summary}`);
    }

    // Coverage rounds: ask for tests of the missing branches; keep a new script only if it passes
    // and covers more.
    previous = undefined;
    while (coverageOf(exec) < coverageThreshold && state.coverageRounds < settings.coverageRounds) {
      stage = 'coverage';
      const round = ++state.coverageRounds;
      progress(stage, `round ${round}: coverage ${coverageOf(exec).toFixed(3)} < ${coverageThreshold}`);
      const improved: LlmStepResult = await llm(P.coverage).improveCoverage({ run, fn, prepared, scriptKey, resultKey: exec.resultKey, round, previous });
      state.tokens += improved.tokens;
      previous = previousOf(improved);
      if (!improved.ok) continue;
      state.promptVersions.coverage = improved.promptVersion;
      const next: ExecutionSummary = await sandbox(P.coverage).executeScript({ run, fn, prepared, scriptKey: improved.scriptKey, coverage: true, installs: improved.installs });
      if (next.status === 'passed' && coverageOf(next) > coverageOf(exec)) {
        scriptKey = state.scriptKey = improved.scriptKey;
        installs = improved.installs;
        exec = state.exec = next;
      }
    }
    const reached = coverageOf(exec);
    if (reached < coverageThreshold) {
      return await finish('coverage', `coverage ${reached.toFixed(3)} below ${coverageThreshold} after ${state.coverageRounds} round(s)`);
    }

    // Stability: the script run with the ground truth several times (another hash seed, run folder
    // and clock each time); a verdict that differs is flaky: rejected, or kept and labelled.
    const stabilityRuns = settings.stability?.runs ?? 0;
    const stable = async (key: string, installs: string[]) =>
      sandbox(P.strength).checkStability({ run, fn, prepared, scriptKey: key, installs, runs: stabilityRuns });
    if (stabilityRuns > 0) {
      stage = 'stability';
      progress(stage, `running the script ${stabilityRuns} times`);
      const verdict = (state.stability = await stable(scriptKey, installs));
      if (verdict.verdict === 'flaky' && !settings.stability!.keepFlaky) return await finish('stability', `flaky: ${verdict.reason}`);
    }

    // Mutation score, then mutation rounds: ask for tests that kill the surviving mutants; keep a
    // new script only if it passes with the ground truth at the coverage reached, is stable and
    // kills more. Then the minimum decides (docs/architecture.md, invariant 13).
    const minScore = thresholds.mutationScore ?? null;
    if (minScore !== null) {
      stage = 'mutation';
      progress(stage, 'scoring the tests against mutants of the target');
      const first = await sandbox(P.strength).scoreMutants({ run, fn, prepared, scriptKey, installs });
      let score = (state.mutation = first);
      previous = undefined;
      while (belowMinScore(score, minScore) && state.mutationRounds < settings.mutation!.rounds) {
        const round = ++state.mutationRounds;
        progress(stage, `round ${round}: ${score.summary} < ${minScore}`);
        const sharper: LlmStepResult = await llm(P.strength).killMutants({ run, fn, prepared, scriptKey, survivorsKey: score.survivorsKey, score: score.score!, round, previous });
        state.tokens += sharper.tokens;
        previous = previousOf(sharper);
        if (!sharper.ok) continue;
        state.promptVersions.mutation = sharper.promptVersion;
        const next: ExecutionSummary = await sandbox(P.strength).executeScript({ run, fn, prepared, scriptKey: sharper.scriptKey, coverage: true, installs: sharper.installs });
        if (next.status !== 'passed' || coverageOf(next) < coverageThreshold) continue;
        const nextStability = stabilityRuns > 0 ? await stable(sharper.scriptKey, sharper.installs) : null;
        if (nextStability?.verdict === 'flaky') continue;
        const nextScore = await sandbox(P.strength).scoreMutants({ run, fn, prepared, scriptKey: sharper.scriptKey, installs: sharper.installs });
        if (nextScore.status === 'scored' && nextScore.killed > score.killed) {
          scriptKey = state.scriptKey = sharper.scriptKey;
          installs = sharper.installs;
          exec = state.exec = next;
          score = state.mutation = nextScore;
          state.stability = nextStability ?? state.stability;
        }
      }
      if (belowMinScore(score, minScore)) {
        const before = state.mutationRounds > 0 ? ` (${first.score!.toFixed(3)} before them)` : '';
        return await finish('mutation', `${score.summary}; below ${minScore} after ${state.mutationRounds} mutation round(s)${before}`);
      }
    }

    // Final checks: AST equivalence, with the LLM functionality check when the trees differ
    // (for an evaluation record, equal trees are required).
    stage = 'ast_check';
    progress(stage, `comparing the sandboxed ${noun} with the original`);
    const ast = await sandbox(P.checks).astCheck({ run, fn, prepared, scriptKey });
    state.astEquivalent = ast.equivalent;
    if (!ast.equivalent) {
      if (thresholds.astCheckRequired) return await finish('ast_check', `an evaluation record needs the original ${noun} unchanged: ${ast.difference ?? 'the trees differ'}`);
      stage = 'functionality_check';
      progress(stage, `asking whether the sandboxed ${noun} behaves the same`);
      const verdict = await llm(P.checks).checkFunctionality({ run, fn, prepared, scriptKey });
      state.tokens += verdict.tokens;
      if (!verdict.ok) return await finish('functionality_check', `${verdict.failure}: ${verdict.detail}`);
      state.promptVersions.check_functionality = verdict.promptVersion;
      state.functionality = verdict.answer;
      if (verdict.answer === 'no') return await finish('functionality_check', `sandboxed ${noun} differs: ${ast.difference ?? ''} ${verdict.reasoning}`.trim());
    }
    stage = 'test_check';
    progress(stage, 'asking whether the tests are correct');
    const testVerdict = await llm(P.checks).checkTests({ run, fn, prepared, scriptKey });
    state.tokens += testVerdict.tokens;
    if (!testVerdict.ok) return await finish('test_check', `${testVerdict.failure}: ${testVerdict.detail}`);
    state.promptVersions.check_tests = testVerdict.promptVersion;
    state.testCorrectness = testVerdict.answer;
    if (testVerdict.answer !== 'yes') return await finish('test_check', `tests judged incorrect: ${testVerdict.reasoning}`);

    // Solvability (evaluation records): can a model implement the function from what its prompt
    // shows? Assertions on behaviour the prompt does not determine are removed, or reject it.
    // The stage asks for a function from its prompt; a class target is evaluated as a whole class (eval.ts --classes).
    if (settings.solvability?.enabled[fn.split] && workflowKind(fn).solvable) {
      stage = 'solvability';
      progress(stage, 'implementations from the prompt alone');
      const solvable = await solvabilityStage({
        run, fn, prepared, scriptKey, exec, settings: settings.solvability, coverageThreshold, coverageOf,
        mutationFloor: minScore !== null ? { minScore, below: (m) => belowMinScore(m, minScore) } : null,
        pipeline: settings, queues: input.queues, progress: (detail) => progress('solvability', detail),
      });
      state.tokens += solvable.tokens;
      Object.assign(state.promptVersions, solvable.promptVersions);
      if (!solvable.ok) return await finish('solvability', solvable.reason);
      scriptKey = state.scriptKey = solvable.scriptKey;
      exec = state.exec = solvable.exec;
      state.mutation = solvable.mutation ?? state.mutation;
      state.solvability = solvable.result;
    }

    const solved = state.solvability ? `, solved by ${state.solvability.passed} of ${state.solvability.samples}` : '';
    const strength = state.mutation?.score != null ? `, mutation score ${state.mutation.score.toFixed(3)}` : '';
    const rounds = state.mutationRounds > 0 ? `, ${state.mutationRounds} mutation round(s)` : '';
    return await finish('accepted', `coverage ${coverageOf(exec).toFixed(3)}${strength}, ${state.debugRounds} debug and ${state.coverageRounds} coverage round(s)${rounds}${solved}`);
  } catch (err) {
    // A record that could not be written is not a stage's outcome: let the parent record the failure.
    if (err instanceof ActivityFailure && err.activityType === 'writeRecord') throw err;
    return finish(stage, activityFailureReason(err));
  }
}
