/**
 * Evaluating a model on a dataset, building training data from it, or augmenting its tests:
 * one EvalWorkflow per run, a child per function through a bounded sliding window that pulls the
 * run's item pages one at a time, continuing as new at a page boundary every
 * `continueAsNewAfter` functions; then the run is finalized (its summary computed from the
 * results in the store). A child that fails becomes a recorded result with its reason and the
 * window goes on: the run always finalizes.
 *
 * Per function (EvalFunctionWorkflow):
 *   prompt (docstring mode; a generated docstring is asked again after an unusable answer)
 *   -> n samples, each: answer (LLM) -> run against the hidden tests (sandbox)
 *        -> up to r self-repair rounds while it fails: repair (LLM) -> run again
 *      (a sample whose step fails for good keeps the rounds it has; the other samples go on)
 *   -> eval with --select genx|codet: candidate tests (LLM) -> one matrix run per sample and one
 *      for the ground truth (sandbox) -> GenX, CodeT and random rankings, n@k and Pr@k
 *   -> rft: passing candidates and the ground truth, deduplicated -> SFT examples
 *   -> the function's result, into the store.
 * Per function (AugmentFunctionWorkflow): inputs (LLM) -> the ground truth's values, several
 *   runs -> deterministic inputs become one more test, checked against the ground truth.
 */
import { ActivityFailure, ApplicationFailure, ParentClosePolicy, continueAsNew, executeChild, isCancellation, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { PipelineSettings, RunRef, TaskQueues } from '../activities/contracts';
import type { CandidateRef, CandidateRun, EvalItem, EvalRunSummary, FunctionEvalResult, FunctionEvalSummary, PreparedPrompt, SampleRound, SampleTrace } from '../activities/eval/contracts';
import type { Usage } from '../activities/store/usage';
import type { EvalSettings } from '../activities/eval/settings';
import { evalActivityProxies, STEP_PRIORITY } from './activities';
import { failureText } from './repo';
import { FunctionKey, RepoKey, RunIdKey } from './search-attributes';
import { slidingWindow, streamingWindow } from './window';

export interface EvalWorkflowInput {
  run: RunRef;
  /** Artifact key of the run's item index (`EvalItemIndex`: pages of items, kept out of the history). */
  itemsKey: string;
  /** The run's evaluation settings, as frozen with it (activities read them from the store). */
  settings: EvalSettings;
  /** Timeouts and the like, as frozen with the run. */
  pipeline: PipelineSettings;
  queues: TaskQueues;
  /** Index of the next item page, carried across continue-as-new. */
  page?: number;
}

export interface EvalFunctionInput {
  run: RunRef;
  item: EvalItem;
  settings: EvalSettings;
  pipeline: PipelineSettings;
  queues: TaskQueues;
}

/** Answers for a generated docstring before the function is recorded as failed. */
const DOCSTRING_ATTEMPTS = 3;

/** Later steps of a function go first: a function near its end must not wait behind new functions' first calls. */
const PRIORITY = {
  prompt: STEP_PRIORITY.sandbox,
  sample: STEP_PRIORITY.tests,
  repair: STEP_PRIORITY.debug,
  ranking: STEP_PRIORITY.coverage,
  training: STEP_PRIORITY.checks,
} as const;

export async function evalWorkflow(input: EvalWorkflowInput): Promise<EvalRunSummary> {
  const { run, settings, pipeline, queues } = input;
  const { io } = evalActivityProxies(queues, pipeline);
  upsertSearchAttributes([{ key: RunIdKey, value: run.runId }]);

  let page = input.page ?? 0;
  let pages = Infinity;
  let buffered: EvalItem[] = [];
  let started = 0;
  /** The next item, loading the next page when the buffer is empty; null at the end, or at a page boundary once it is time to continue as new (a page is never cut). */
  const pull = async (): Promise<EvalItem | null> => {
    while (buffered.length === 0) {
      if (page >= pages) return null;
      if (started > 0 && (started >= settings.continueAsNewAfter || workflowInfo().continueAsNewSuggested)) return null;
      const loaded = await io.loadEvalItems({ run, itemsKey: input.itemsKey, page });
      pages = loaded.pages;
      if (page >= pages) return null;
      page += 1;
      buffered = loaded.items;
    }
    started += 1;
    return buffered.shift()!;
  };

  const runChild = async (item: EvalItem): Promise<void> => {
    const args: [EvalFunctionInput] = [{ run, item, settings, pipeline, queues }];
    const options = {
      workflowId: `${run.runId}/${settings.task}/${item.functionId}`,
      taskQueue: queues.workflows,
      args,
      // Cancelling the run cancels its functions; nothing else ends them early.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      staticSummary: `${item.repo} ${item.qualname}`,
    };
    try {
      if (settings.task === 'augment') await executeChild(augmentFunctionWorkflow, options);
      else await executeChild(evalFunctionWorkflow, options);
    } catch (err) {
      // One failure never ends the run (DESIGN invariant 8): it is recorded with its reason.
      const failed = emptyResult(item.functionId);
      failed.error = `the function's workflow failed: ${failureText(err)}`;
      // Not even the failure could be written: the run's summary counts the function as missing.
      await io.writeEvalFunction({ run, item, result: failed }).catch(() => undefined);
    }
  };

  await streamingWindow(pull, settings.functionWindow, runChild);
  if (page < pages) {
    // Pages are left: continue as new with a fresh history (the window has drained).
    await continueAsNew<typeof evalWorkflow>({ ...input, page });
  }
  return io.finalizeEval({ run, itemsKey: input.itemsKey });
}

function tagFunction(run: RunRef, item: EvalItem): void {
  upsertSearchAttributes([
    { key: RunIdKey, value: run.runId },
    { key: RepoKey, value: item.repo },
    { key: FunctionKey, value: item.qualname },
  ]);
}

/** An activity that failed for good becomes a reason; cancellation (and anything else) still ends the workflow. */
function failureReason(err: unknown): string {
  if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
  const cause = err.cause instanceof ApplicationFailure ? `${err.cause.type ?? 'error'}: ${err.cause.message}` : (err.cause?.message ?? err.message);
  return `activity ${err.activityType} failed: ${cause}`.slice(0, 1500);
}

function summaryOf(result: FunctionEvalResult): FunctionEvalSummary {
  return {
    functionId: result.functionId,
    samples: result.samples.filter((s) => s.rounds.length > 0).length,
    passedInitially: result.samples.filter((s) => s.rounds[0]?.run.passed).length,
    passedFinally: result.samples.filter((s) => s.rounds.some((r) => r.run.passed)).length,
    error: result.error,
  };
}

function emptyResult(functionId: string): FunctionEvalResult {
  return { functionId, error: null, stepErrors: [], prompt: null, unusedDocstringUsage: null, samples: [], ranking: null, rankingUsage: null, training: null, augmentation: null };
}

export async function evalFunctionWorkflow(input: EvalFunctionInput): Promise<FunctionEvalSummary> {
  const { run, item, settings } = input;
  const { io, llm, sandbox } = evalActivityProxies(input.queues, input.pipeline);
  tagFunction(run, item);
  const result = emptyResult(item.functionId);

  // The prompt: the dependency-only context with the target's body taken out.
  let prompt: PreparedPrompt | null = null;
  try {
    let spent: Usage | null = null;
    let reason = '';
    for (let attempt = 0; attempt < DOCSTRING_ATTEMPTS && !prompt; attempt++) {
      const prepared: Awaited<ReturnType<ReturnType<typeof llm>['prepareEvalPrompt']>> = await llm(PRIORITY.prompt).prepareEvalPrompt({ run, item, attempt, spent });
      if (prepared.ok) prompt = prepared.prompt;
      else ({ reason, usage: spent } = prepared);
    }
    if (!prompt) {
      result.error = `no usable docstring after ${DOCSTRING_ATTEMPTS} answer(s): ${reason}`;
      result.unusedDocstringUsage = spent;
    }
  } catch (err) {
    result.error = failureReason(err);
  }

  if (prompt) {
    result.prompt = prompt;
    const { promptKey, contextKey } = prompt;

    // Samples, each with its self-repair rounds; a sample's failure ends that sample only.
    const hidden = (ref: CandidateRef, priority: typeof PRIORITY.sample | typeof PRIORITY.repair): Promise<CandidateRun> =>
      ref.candidateKey
        ? sandbox(priority).runCandidate({ run, item, candidateKey: ref.candidateKey })
        : Promise.resolve({ passed: false, kind: 'no_code', exceptionType: null, summary: ref.noCode ?? 'no code', resultKey: null, durationMs: 0 });
    const runSample = async (sample: number): Promise<SampleTrace> => {
      const rounds: SampleRound[] = [];
      try {
        let ref = await llm(PRIORITY.sample).sampleCandidate({ run, item, promptKey, sample });
        for (let round = 0; ; round++) {
          const outcome = await hidden(ref, round === 0 ? PRIORITY.sample : PRIORITY.repair);
          rounds.push({ round, candidateKey: ref.candidateKey, run: outcome, usage: ref.usage });
          if (outcome.passed || round >= settings.repairRounds) break;
          ref = await llm(PRIORITY.repair).repairCandidate({ run, item, contextKey, candidateKey: ref.candidateKey, resultKey: outcome.resultKey, failure: outcome.summary, round: round + 1, sample });
        }
        return { sample, rounds, error: null };
      } catch (err) {
        return { sample, rounds, error: failureReason(err) };
      }
    };
    result.samples = await slidingWindow(
      Array.from({ length: settings.n }, (_, i) => i),
      settings.sampleWindow,
      runSample,
    );
    const scored = result.samples.filter((s) => s.rounds.length > 0);
    if (scored.length === 0) result.error = `no sample could be evaluated: ${result.samples[0]?.error ?? 'none was asked for'}`;

    // Dual ranking of the first answers, without the ground truth (which only judges it after).
    if (scored.length > 0 && settings.task === 'eval' && settings.select !== 'none') {
      try {
        const first = scored.map((s) => s.rounds[0]!);
        let rows = first.map(() => '');
        let truthRow = '';
        if (settings.select !== 'random') {
          const answers = await slidingWindow(
            Array.from({ length: settings.testSamples }, (_, i) => i),
            settings.sampleWindow,
            (attempt) => llm(PRIORITY.ranking).generateCandidateTests({ run, item, contextKey, attempt }),
          );
          const tests = await io.mergeCandidateTests({ run, answers: answers.map((a) => ({ testsKey: a.testsKey, usage: a.usage })) });
          result.rankingUsage = tests.usage;
          const none = '0'.repeat(tests.count);
          rows = await slidingWindow(first, settings.sampleWindow, async (r) =>
            r.candidateKey && tests.count > 0 ? (await sandbox(PRIORITY.ranking).runTestMatrix({ run, item, candidateKey: r.candidateKey, testsKey: tests.testsKey })).row : none,
          );
          truthRow = tests.count > 0 ? (await sandbox(PRIORITY.ranking).runTestMatrix({ run, item, candidateKey: null, testsKey: tests.testsKey })).row : '';
        }
        const ranking = await io.rankCandidates({ run, rows, truthRow, hidden: first.map((r) => r.run.passed) });
        // The ranking indexes the scored samples; the result names samples by their number.
        for (const m of Object.values(ranking.methods)) m.top = m.top === null ? null : scored[m.top]!.sample;
        result.ranking = ranking;
      } catch (err) {
        result.stepErrors.push(`ranking: ${failureReason(err)}`);
      }
    }

    // Training data: the ground truth and every passing candidate, deduplicated.
    if (scored.length > 0 && settings.task === 'rft') {
      try {
        const passing = scored.flatMap((s) => s.rounds.filter((r) => r.run.passed && r.candidateKey).map((r) => ({ candidateKey: r.candidateKey!, sample: s.sample, round: r.round })));
        result.training = await sandbox(PRIORITY.training).collectTrainingTargets({ run, item, promptKey, passing });
      } catch (err) {
        result.stepErrors.push(`training targets: ${failureReason(err)}`);
      }
    }
  }
  await io.writeEvalFunction({ run, item, result });
  return summaryOf(result);
}

export async function augmentFunctionWorkflow(input: EvalFunctionInput): Promise<FunctionEvalSummary> {
  const { run, item, settings } = input;
  const { io, llm, sandbox } = evalActivityProxies(input.queues, input.pipeline);
  tagFunction(run, item);
  const result = emptyResult(item.functionId);
  try {
    const proposal = await llm(PRIORITY.sample).proposeTestInputs({ run, item, attempt: 0 });
    // Separate runs are separate processes: hash seeds, clocks and addresses differ between them.
    const outputsKeys: string[] = [];
    if (proposal.count > 0) {
      for (let r = 0; r < settings.determinismRuns; r++) outputsKeys.push((await sandbox(PRIORITY.repair).runCaseOutputs({ run, item, casesKey: proposal.casesKey, attempt: r })).outputsKey);
    }
    const augmented = await sandbox(PRIORITY.training).augmentScript({ run, item, casesKey: proposal.casesKey, outputsKeys });
    result.augmentation = { ...augmented, usage: proposal.usage };
  } catch (err) {
    result.error = failureReason(err);
  }
  await io.writeEvalFunction({ run, item, result });
  return summaryOf(result);
}
