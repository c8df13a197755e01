/**
 * One function through RepoST's sandbox testing, each step one activity and each round
 * visible in the history:
 *   prepare -> sandbox (LLM) -> tests (LLM) -> execute with the ground truth as the new implementation
 *   -> up to k debug rounds -> coverage rounds until the threshold
 *   -> [stability check] -> [mutation score, mutation rounds until the minimum score]
 *   -> AST equivalence, LLM functionality check, LLM test check
 *   -> for an evaluation record, solvability: can a model implement it from its prompt
 *   -> record (accepted, or rejected with stage and reason).
 * Each stage after execution is a function in a file of its own beside this one (debug-rounds.ts,
 * coverage-rounds.ts, strength.ts, final-checks.ts, solvability.ts); what they share, the script
 * in use and the one way to adopt a better one, is pipeline.ts. An evaluation-split function needs
 * the evaluation thresholds (full coverage, equal ASTs). The bracketed stages run when the run's
 * settings ask for them (`loops.stability`, `loops.mutation`).
 */
import { ActivityFailure, upsertSearchAttributes } from '@temporalio/workflow';
import type { FunctionOutcome, FunctionStage } from '../activities/contracts';
import { coverageRounds } from './coverage-rounds';
import { debugRounds } from './debug-rounds';
import { activityFailureReason } from './failures';
import { finalChecks } from './final-checks';
import { boundedKeyword } from './ids';
import { belowMinScore, coverageOf, pipelineOf, type FunctionWorkflowInput, type Pipeline, type Rejection } from './pipeline';
import { PIPELINE_PRIORITY as P } from './priorities';
import { FunctionKey, OutcomeKey, RepoKey, RunIdKey, SplitKey } from './search-attributes';
import { solvabilityStage } from './solvability';
import { mutationRounds, stabilityCheck } from './strength';
import { workflowKind } from './target-kinds';

export { belowMinScore, coverageOf, thresholdsFor, type FunctionWorkflowInput } from './pipeline';

export async function functionWorkflow(input: FunctionWorkflowInput): Promise<FunctionOutcome> {
  const { run, fn } = input;
  upsertSearchAttributes([
    { key: RunIdKey, value: boundedKeyword(run.runId) },
    { key: RepoKey, value: boundedKeyword(fn.repoId) },
    { key: FunctionKey, value: boundedKeyword(`${fn.path}::${fn.qualname}`) },
    { key: SplitKey, value: fn.split },
  ]);
  const p = pipelineOf(input);
  // An activity that failed for good (retries exhausted, or a non-retryable LLM error such as a
  // bad request) ends the function as a rejection at the stage it reached, with the reason;
  // cancellation still cancels.
  try {
    // Prepare: the function's source and its local-dependency context, as artifacts.
    p.enter('prepare', 'static analysis');
    const prep = await p.io.prepareFunction({ run, fn });
    if (!prep.ok) return await finish(p, 'prepare', prep.reason);
    const prepared = (p.state.prepared = prep.prepared);

    // Sandboxing: the function and its local dependencies into one standalone script.
    p.enter('sandbox', 'writing the standalone script');
    const sandboxed = await p.regenerating('sandbox', (attempt, previous) => p.llm(P.sandbox).generateSandboxScript({ run, fn, prepared, attempt, previous }));
    if (!sandboxed.ok) return await finish(p, 'sandbox', `${sandboxed.failure}: ${sandboxed.detail}`);
    p.adopt({ key: sandboxed.scriptKey, installs: [], exec: null });

    // Test generation: equivalence tests comparing the function with its new implementation.
    p.enter('tests', 'writing equivalence tests');
    const tested = await p.regenerating('tests', (attempt, previous) => p.llm(P.tests).generateTests({ run, fn, prepared, sandboxScriptKey: sandboxed.scriptKey, attempt, previous }));
    if (!tested.ok) return await finish(p, 'tests', `${tested.failure}: ${tested.detail}`);
    p.adopt({ key: tested.scriptKey, installs: tested.installs, exec: null });

    // Execution with the ground truth copied in as `<name>_new_implementation`, then the rounds
    // and checks, each stage ending the function with its rejection or handing on.
    p.enter('execute', 'running the script with the ground truth');
    p.adopt({ ...p.script, exec: await p.execute(P.tests, p.script) });
    const rejected =
      (await debugRounds(p)) ??
      (await coverageRounds(p)) ??
      (await stabilityCheck(p)) ??
      (await mutationRounds(p)) ??
      (await finalChecks(p)) ??
      (await solvability(p));
    if (rejected) return await finish(p, rejected.stage, rejected.reason);

    const { state } = p;
    const solved = state.solvability ? `, solved by ${state.solvability.passed} of ${state.solvability.samples}` : '';
    const strength = state.mutation?.score != null ? `, mutation score ${state.mutation.score.toFixed(3)}` : '';
    const rounds = state.mutationRounds > 0 ? `, ${state.mutationRounds} mutation round(s)` : '';
    return await finish(p, 'accepted', `coverage ${coverageOf(p.exec).toFixed(3)}${strength}, ${state.debugRounds} debug and ${state.coverageRounds} coverage round(s)${rounds}${solved}`);
  } catch (err) {
    // A record that could not be written is not a stage's outcome: let the parent record the failure.
    if (err instanceof ActivityFailure && err.activityType === 'writeRecord') throw err;
    return finish(p, p.stage, activityFailureReason(err));
  }
}

/**
 * Solvability (evaluation records): can a model implement the function from what its prompt
 * shows? Assertions on behaviour the prompt does not determine are removed, or reject it. The
 * stage asks for a function from its prompt; a class target is evaluated as a whole class.
 */
async function solvability(p: Pipeline): Promise<Rejection | null> {
  const { settings, fn, state } = p;
  if (!settings.solvability?.enabled[fn.split] || !workflowKind(fn).solvable) return null;
  p.enter('solvability', 'implementations from the prompt alone');
  const minScore = p.thresholds.mutationScore ?? null;
  const solvable = await solvabilityStage({
    run: p.run, fn, prepared: p.prepared, scriptKey: p.script.key, exec: p.exec, settings: settings.solvability, coverageThreshold: p.thresholds.coverage, coverageOf,
    mutationFloor: minScore !== null ? { minScore, below: (m) => belowMinScore(m, minScore) } : null,
    pipeline: settings, queues: p.queues, progress: (detail) => p.progress('solvability', detail),
  });
  state.tokens += solvable.tokens;
  Object.assign(state.promptVersions, solvable.promptVersions);
  if (!solvable.ok) return { stage: 'solvability', reason: solvable.reason };
  p.adopt({ ...p.script, key: solvable.scriptKey, exec: solvable.exec });
  state.mutation = solvable.mutation ?? state.mutation;
  state.solvability = solvable.result;
  return null;
}

/** Writes the function's record (accepted, or rejected with its stage and reason) and shows its end. */
async function finish(p: Pipeline, stage: FunctionStage, reason: string): Promise<FunctionOutcome> {
  const { run, fn, state, thresholds } = p;
  const accepted = stage === 'accepted';
  const outcome: FunctionOutcome = {
    functionId: fn.functionId, path: fn.path, qualname: fn.qualname, accepted, stage, reason,
    debugRounds: state.debugRounds, coverageRounds: state.coverageRounds, ...(state.mutationRounds > 0 ? { mutationRounds: state.mutationRounds } : {}),
    branchCoverage: state.script?.exec?.coverage?.branchCoverage ?? null, tokens: state.tokens,
  };
  const { prepared, astEquivalent, functionality, testCorrectness, solvability, promptVersions, mutation, stability } = state;
  const scriptKey = state.script?.key ?? null;
  const execution = state.script?.exec ?? null;
  await p.io.writeRecord({ run, fn, thresholds, prepared, outcome, scriptKey, execution, astEquivalent, functionality, testCorrectness, solvability, promptVersions, mutation, stability });
  upsertSearchAttributes([{ key: OutcomeKey, value: accepted ? 'accepted' : 'rejected' }]);
  p.progress(stage, accepted ? `accepted: ${reason}` : `rejected: ${reason.slice(0, 300)}`);
  return outcome;
}
