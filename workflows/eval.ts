/**
 * Evaluating a model on a dataset, building training data from it, or augmenting its tests:
 * one EvalWorkflow per run, a child per function through a bounded sliding window, continuing
 * as new every `continueAsNewAfter` functions; then the run's files are assembled.
 *
 * Per function (EvalFunctionWorkflow):
 *   prompt (docstring mode; a generated docstring is asked again after an unusable answer)
 *   -> n samples, each: answer (LLM) -> run against the hidden tests (sandbox)
 *        -> up to r self-repair rounds while it fails: repair (LLM) -> run again
 *   -> eval with --select genx|codet: candidate tests (LLM) -> one matrix run per sample and one
 *      for the ground truth (sandbox) -> GenX, CodeT and random rankings, n@k and Pr@k
 *   -> rft: passing candidates and the ground truth, deduplicated -> SFT examples
 *   -> the function's result line (an activity that failed for good becomes its error).
 * Per function (AugmentFunctionWorkflow): inputs (LLM) -> the ground truth's values, several
 *   runs -> deterministic inputs become one more test, checked against the ground truth.
 */
import { ActivityFailure, ApplicationFailure, ParentClosePolicy, continueAsNew, executeChild, isCancellation, upsertSearchAttributes } from '@temporalio/workflow';
import type { TaskQueues } from '../activities/contracts';
import type {
  CandidateRef,
  CandidateRun,
  EvalItem,
  EvalRunRef,
  EvalRunSummary,
  FunctionEvalResult,
  FunctionEvalSummary,
  PreparedPrompt,
  SampleRound,
  SampleTrace,
  Usage,
} from '../activities/eval/contracts';
import type { DatasetMeta } from '../activities/eval/finalize';
import type { EvalSettings } from '../activities/eval/settings';
import { evalActivityProxies } from './activities';
import { FunctionKey, RepoKey, RunIdKey } from './search-attributes';
import { slidingWindow } from './window';

export interface EvalWorkflowInput {
  run: EvalRunRef;
  /** Artifact key of the JSON list of `EvalItem`s (kept out of the history). */
  itemsKey: string;
  dataset: DatasetMeta;
  settings: EvalSettings;
  queues: TaskQueues;
  /** Index of the next item, carried across continue-as-new. */
  cursor?: number;
}

export interface EvalFunctionInput {
  run: EvalRunRef;
  item: EvalItem;
  settings: EvalSettings;
  queues: TaskQueues;
}

/** Answers for a generated docstring before the function is recorded as failed. */
const DOCSTRING_ATTEMPTS = 3;

export async function evalWorkflow(input: EvalWorkflowInput): Promise<EvalRunSummary> {
  const { run, settings, queues } = input;
  const { io } = evalActivityProxies(queues);
  upsertSearchAttributes([{ key: RunIdKey, value: run.runId }]);

  const cursor = input.cursor ?? 0;
  const page = await io.loadEvalItems({ itemsKey: input.itemsKey, offset: cursor, limit: settings.continueAsNewAfter });
  await slidingWindow(page.items, settings.functionWindow, (item) => {
    const args: [EvalFunctionInput] = [{ run, item, settings, queues }];
    const options = { workflowId: `${run.runId}/${settings.task}/${item.functionId}`, taskQueue: queues.workflows, args, parentClosePolicy: ParentClosePolicy.TERMINATE };
    return settings.task === 'augment' ? executeChild(augmentFunctionWorkflow, options) : executeChild(evalFunctionWorkflow, options);
  });
  const next = cursor + page.items.length;
  if (next < page.total) {
    await continueAsNew<typeof evalWorkflow>({ ...input, cursor: next });
  }
  return io.finalizeEval({ run, settings, itemsKey: input.itemsKey, dataset: input.dataset });
}

function emptyResult(functionId: string): FunctionEvalResult {
  return { functionId, error: null, prompt: null, unusedDocstringUsage: null, samples: [], ranking: null, rankingUsage: null, training: null, augmentation: null };
}

function tagFunction(run: EvalRunRef, item: EvalItem): void {
  upsertSearchAttributes([
    { key: RunIdKey, value: run.runId },
    { key: RepoKey, value: item.repo },
    { key: FunctionKey, value: item.qualname },
  ]);
}

/** An activity that failed for good ends the function with its reason; cancellation still cancels. */
function failureReason(err: unknown): string {
  if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
  const cause = err.cause instanceof ApplicationFailure ? `${err.cause.type ?? 'error'}: ${err.cause.message}` : (err.cause?.message ?? err.message);
  return `activity ${err.activityType} failed: ${cause}`;
}

function summaryOf(result: FunctionEvalResult): FunctionEvalSummary {
  return {
    functionId: result.functionId,
    samples: result.samples.length,
    passedInitially: result.samples.filter((s) => s.rounds[0]?.run.passed).length,
    passedFinally: result.samples.filter((s) => s.rounds.some((r) => r.run.passed)).length,
    error: result.error,
  };
}

export async function evalFunctionWorkflow(input: EvalFunctionInput): Promise<FunctionEvalSummary> {
  const { run, item, settings } = input;
  const { io, llm, sandbox } = evalActivityProxies(input.queues);
  tagFunction(run, item);
  const result = emptyResult(item.functionId);

  const evaluate = async (): Promise<void> => {
    // The prompt: the dependency-only context with the target's body taken out.
    let prompt: PreparedPrompt | null = null;
    let spent: Usage | null = null;
    let reason = '';
    for (let attempt = 0; attempt < DOCSTRING_ATTEMPTS && !prompt; attempt++) {
      const prepared: Awaited<ReturnType<typeof llm.prepareEvalPrompt>> = await llm.prepareEvalPrompt({ run, item, settings, attempt, spent });
      if (prepared.ok) prompt = prepared.prompt;
      else ({ reason, usage: spent } = prepared);
    }
    if (!prompt) {
      result.error = `no usable docstring after ${DOCSTRING_ATTEMPTS} answer(s): ${reason}`;
      result.unusedDocstringUsage = spent;
      return;
    }
    result.prompt = prompt;
    const { promptKey, contextKey } = prompt;

    // Samples, each with its self-repair rounds.
    const hidden = (ref: CandidateRef): Promise<CandidateRun> =>
      ref.candidateKey
        ? sandbox.runCandidate({ item, candidateKey: ref.candidateKey, settings })
        : Promise.resolve({ passed: false, kind: 'no_code', exceptionType: null, summary: ref.noCode ?? 'no code', resultKey: null, durationMs: 0 });
    const runSample = async (sample: number): Promise<SampleTrace> => {
      const rounds: SampleRound[] = [];
      let ref = await llm.sampleCandidate({ run, item, promptKey, sample, settings });
      for (let round = 0; ; round++) {
        const outcome = await hidden(ref);
        rounds.push({ round, candidateKey: ref.candidateKey, run: outcome, usage: ref.usage });
        if (outcome.passed || round >= settings.repairRounds) break;
        ref = await llm.repairCandidate({ run, item, contextKey, candidateKey: ref.candidateKey, resultKey: outcome.resultKey, failure: outcome.summary, round: round + 1, sample, settings });
      }
      return { sample, rounds };
    };
    result.samples = await slidingWindow(
      Array.from({ length: settings.n }, (_, i) => i),
      settings.sampleWindow,
      runSample,
    );

    // Dual ranking of the first answers, without the ground truth (which only judges it after).
    if (settings.task === 'eval' && settings.select !== 'none') {
      const first = result.samples.map((s) => s.rounds[0]!);
      let rows = first.map(() => '');
      let truthRow = '';
      if (settings.select !== 'random') {
        const answers = await slidingWindow(
          Array.from({ length: settings.testSamples }, (_, i) => i),
          settings.sampleWindow,
          (attempt) => llm.generateCandidateTests({ run, item, contextKey, attempt, settings }),
        );
        const tests = await io.mergeCandidateTests({ answers: answers.map((a) => ({ testsKey: a.testsKey, usage: a.usage })) });
        result.rankingUsage = tests.usage;
        const none = '0'.repeat(tests.count);
        rows = await slidingWindow(first, settings.sampleWindow, async (r) =>
          r.candidateKey && tests.count > 0 ? (await sandbox.runTestMatrix({ item, candidateKey: r.candidateKey, testsKey: tests.testsKey, settings })).row : none,
        );
        truthRow = tests.count > 0 ? (await sandbox.runTestMatrix({ item, candidateKey: null, testsKey: tests.testsKey, settings })).row : '';
      }
      result.ranking = await io.rankCandidates({ rows, truthRow, hidden: first.map((r) => r.run.passed), settings });
    }

    // Training data: the ground truth and every passing candidate, deduplicated.
    if (settings.task === 'rft') {
      const passing = result.samples.flatMap((s) => s.rounds.filter((r) => r.run.passed && r.candidateKey).map((r) => ({ candidateKey: r.candidateKey!, sample: s.sample, round: r.round })));
      result.training = await sandbox.collectTrainingTargets({ item, promptKey, passing, settings });
    }
  };
  try {
    await evaluate();
  } catch (err) {
    result.error = failureReason(err);
  }
  await io.writeEvalFunction({ run, item, settings, result });
  return summaryOf(result);
}

export async function augmentFunctionWorkflow(input: EvalFunctionInput): Promise<FunctionEvalSummary> {
  const { run, item, settings } = input;
  const { io, llm, sandbox } = evalActivityProxies(input.queues);
  tagFunction(run, item);
  const result = emptyResult(item.functionId);
  try {
    const proposal = await llm.proposeTestInputs({ run, item, attempt: 0, settings });
    // Separate runs are separate processes: hash seeds, clocks and addresses differ between them.
    const outputsKeys: string[] = [];
    if (proposal.count > 0) {
      for (let r = 0; r < settings.determinismRuns; r++) outputsKeys.push((await sandbox.runCaseOutputs({ item, casesKey: proposal.casesKey, settings, run: r })).outputsKey);
    }
    const augmented = await sandbox.augmentScript({ item, casesKey: proposal.casesKey, outputsKeys, settings });
    result.augmentation = { ...augmented, usage: proposal.usage };
  } catch (err) {
    result.error = failureReason(err);
  }
  await io.writeEvalFunction({ run, item, settings, result });
  return summaryOf(result);
}
