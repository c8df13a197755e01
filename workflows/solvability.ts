/**
 * The solvability stage of a record (workflows/function.ts runs it after the final checks, for
 * the splits `loops.solvability.enabled` names): can a model implement the function from what
 * its prompt shows? It reuses the evaluation's activities, so the check is the evaluation itself.
 *   the function as an evaluation task -> its prompt: the docstring, or one written from the
 *   ground truth (without generation, a function without one is left out of the split)
 *   -> k implementations from the prompt alone (LLM), each run against the tests (sandbox)
 *   -> while none passes, up to `rounds` times:
 *        the assertions the failing runs stopped at (io) -> each judged: does the prompt
 *        determine what it checks? (LLM) -> those it does not: removed (io: refused when a test,
 *        its helpers counted, would check nothing or no assertion on the target's result would
 *        be left), the script run again with the ground truth and its coverage measured
 *        (sandbox), its tests scored against mutants again when the mutation stage is on
 *        (sandbox), the implementations run again (sandbox); or the record rejected, the
 *        assertions named
 *   -> the record's solve rate: the implementations that pass, of those scored.
 */
import type { ExecutionSummary, FunctionRef, MutationScore, PipelineSettings, PreparedFunction, RunRef, SolvabilityResult, SolvabilitySettings, TaskQueues } from '../activities/contracts';
import type { CandidateRef, CandidateRun, FailingAssertion } from '../activities/eval/contracts';
import type { Usage } from '../activities/store/usage';
import { activityProxies, evalActivityProxies } from './activities';
import { evalPrompt, runHidden } from './eval-steps';
import { activityFailureReason } from './failures';
import { PIPELINE_PRIORITY } from './priorities';

export interface SolvabilityInput {
  run: RunRef;
  fn: FunctionRef;
  prepared: PreparedFunction;
  /** The script and its run with the ground truth, as the final checks left them. */
  scriptKey: string;
  exec: ExecutionSummary;
  settings: SolvabilitySettings;
  /** The coverage the record's split requires, and how a run's coverage is read. */
  coverageThreshold: number;
  coverageOf: (exec: ExecutionSummary) => number;
  /**
   * When the mutation stage is on: the split's minimum score and how a score is held to it. A
   * removal is scored again, and one that leaves the tests below it rejects the record.
   */
  mutationFloor: { minScore: number; below: (m: MutationScore) => boolean } | null;
  pipeline: PipelineSettings;
  queues: TaskQueues;
  /** Shows where the stage is in the Temporal UI. */
  progress: (detail: string) => void;
}

interface Common {
  /** LLM tokens the stage spent. */
  tokens: number;
  promptVersions: Record<string, string>;
}

export type SolvabilityOutcome =
  | (Common & { ok: true; scriptKey: string; exec: ExecutionSummary; result: SolvabilityResult; /** The tests' score after removals (mutation stage on, something removed). */ mutation: MutationScore | null })
  | (Common & { ok: false; reason: string });

interface Sample {
  ref: CandidateRef;
  run: CandidateRun;
}

const named = (assertions: readonly FailingAssertion[]) => assertions.map((a) => `line ${a.line} \`${a.text.slice(0, 160)}\``).join('; ');

export async function solvabilityStage(input: SolvabilityInput): Promise<SolvabilityOutcome> {
  const { run, fn, prepared, settings } = input;
  const evaluation = evalActivityProxies(input.queues, input.pipeline);
  const { sandbox } = activityProxies(input.queues, input.pipeline);
  const P = PIPELINE_PRIORITY.solvability;
  const promptVersions: Record<string, string> = {};
  let tokens = 0;
  const spend = (u: Usage | null | undefined) => {
    if (u) tokens += u.promptTokens + u.completionTokens;
  };
  const reject = (reason: string): SolvabilityOutcome => ({ ok: false, reason, tokens, promptVersions });
  let { scriptKey, exec } = input;
  let mutation: MutationScore | null = null;

  // The task: the function as the evaluation will see it.
  const task = await evaluation.io.solvabilityTask({ run, fn, prepared, scriptKey, packages: exec.packages });
  let item = task.item;
  if (!task.hasDocstring && settings.missingDocstring === 'exclude') {
    return reject('no docstring: an evaluation record must say what its function does, and writing one is off (loops.solvability.generateDocstrings)');
  }

  // Its prompt: the function's docstring, or one written from the ground truth.
  input.progress(task.hasDocstring ? 'the prompt, with the docstring' : 'writing a docstring from the ground truth');
  const made = await evalPrompt(evaluation.llm, P, run, item);
  if (!made.ok) {
    spend(made.spent);
    return reject(made.reason);
  }
  const prompt = made.prompt;
  spend(prompt.usage);
  promptVersions.solve = `solve@${prompt.promptVersion}`;
  const { promptKey, contextKey } = prompt;

  // k implementations from the prompt alone, each run against the tests. A sample whose step failed
  // for good, or whose run the harness failed, says nothing about the task and is left out.
  input.progress(`${settings.k} implementation(s) from the prompt alone`);
  const errors: string[] = [];
  const tried = await Promise.all(
    Array.from({ length: settings.k }, async (_, sample): Promise<Sample | null> => {
      try {
        const ref = await evaluation.llm(P).sampleCandidate({ run, item, promptKey, sample });
        spend(ref.usage);
        return { ref, run: await runHidden(evaluation.sandbox, P, run, item, ref) };
      } catch (err) {
        errors.push(activityFailureReason(err));
        return null;
      }
    }),
  );
  const scored = tried.filter((s): s is Sample => s !== null && s.run.kind !== 'harness');
  if (scored.length === 0) {
    const harness = tried.find((s) => s?.run.kind === 'harness');
    return reject(`no implementation could be scored: ${harness ? harness.run.summary : (errors[0] ?? 'none was asked for')}`);
  }
  const passes = () => scored.filter((s) => s.run.passed).length;
  const passedInitially = passes();

  // While none passes: the assertions they stopped at, judged; those on behaviour the prompt does
  // not determine are removed, the script checked again with the ground truth, the samples run again.
  const removed: { line: number; text: string }[] = [];
  const judged = new Set<string>();
  for (let round = 1; passes() === 0 && round <= settings.rounds; round++) {
    const failing = scored.filter((s) => s.ref.candidateKey !== null && s.run.resultKey !== null);
    const found = await evaluation.io.failingAssertions({
      run,
      item,
      runs: failing.map((s) => ({ candidateKey: s.ref.candidateKey!, resultKey: s.run.resultKey!, summary: s.run.summary })),
    });
    const fresh = found.assertions.filter((a) => !judged.has(a.text));
    if (fresh.length === 0) break;
    input.progress(`round ${round}: is what ${fresh.length} failing assertion(s) check determined by the prompt?`);
    const undetermined: FailingAssertion[] = [];
    for (const assertion of fresh) {
      judged.add(assertion.text);
      const verdict = await evaluation.llm(P).judgeAssertion({ run, item, contextKey, assertion });
      spend(verdict.usage);
      // An unusable verdict removes nothing: an assertion goes only on the judge's word.
      if (!verdict.ok) continue;
      promptVersions.check_assertion = verdict.promptVersion;
      if (!verdict.determined) undetermined.push(assertion);
    }
    if (undetermined.length === 0) break;
    if (settings.undetermined === 'reject') return reject(`asserts behaviour its prompt does not determine: ${named(undetermined)}`);
    const cut = await evaluation.io.removeAssertions({ run, item, assertions: undetermined.map(({ line, text }) => ({ line, text })) });
    if (!cut.ok) return reject(`asserts behaviour its prompt does not determine, and removing it ${cut.reason}: ${named(undetermined)}`);
    input.progress(`round ${round}: ${cut.removed.length} assertion(s) removed, the script run again with the ground truth`);
    const next = await sandbox(P).executeScript({ run, fn, prepared, scriptKey: cut.scriptKey, coverage: true, installs: exec.packages.map((p) => `${p.name}==${p.version}`) });
    if (next.status !== 'passed') return reject(`asserts behaviour its prompt does not determine, and without it the script fails with the ground truth (${next.summary}): ${named(undetermined)}`);
    const reached = input.coverageOf(next);
    if (reached < input.coverageThreshold) {
      return reject(`asserts behaviour its prompt does not determine, and without it coverage ${reached.toFixed(3)} is below ${input.coverageThreshold}: ${named(undetermined)}`);
    }
    if (input.mutationFloor) {
      // The tests without them, against the target's mutants again: a removal must not hollow them out.
      input.progress(`round ${round}: scoring the tests without them against mutants`);
      const rescored = await sandbox(P).scoreMutants({ run, fn, prepared, scriptKey: cut.scriptKey, installs: exec.packages.map((p) => `${p.name}==${p.version}`), sample: { cap: input.pipeline.mutation!.cap, seed: input.pipeline.mutation!.seed } });
      const { minScore, below } = input.mutationFloor;
      if (rescored.status === 'ground_truth_failed' || below(rescored)) {
        return reject(`asserts behaviour its prompt does not determine, and without it the tests fall below the minimum mutation score ${minScore} (${rescored.summary}): ${named(undetermined)}`);
      }
      mutation = rescored;
    }
    ({ item, scriptKey } = cut);
    exec = next;
    removed.push(...cut.removed);
    const again = await Promise.all(scored.map((s) => runHidden(evaluation.sandbox, P, run, item, s.ref)));
    scored.forEach((s, i) => (s.run = again[i]!));
  }

  return {
    ok: true,
    scriptKey,
    exec,
    mutation,
    tokens,
    promptVersions,
    result: {
      model: task.model,
      samples: scored.length,
      passed: passes(),
      passedInitially,
      docstring: prompt.docstring === 'generated' ? 'generated' : 'original',
      docstringKey: prompt.docstringKey,
      missingDocstring: settings.missingDocstring,
      judged: judged.size,
      removed,
    },
  };
}
