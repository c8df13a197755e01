/**
 * One function of an evaluation or training-data run:
 *   prompt (docstring mode; a generated docstring is asked again after an unusable answer)
 *   -> n samples, each: answer (LLM) -> run against the hidden tests (sandbox)
 *        -> up to r self-repair rounds while it fails (not when the harness failed it): repair (LLM) -> run again
 *      (a sample whose step fails for good keeps the rounds it has; the other samples go on)
 *   -> eval with --select genx|codet|random: candidate tests (LLM) -> one matrix run per sample and
 *      one for the ground truth (sandbox) -> GenX, CodeT and random rankings, n@k and Pr@k
 *   -> rft: passing candidates and the ground truth, deduplicated -> SFT examples
 *   -> the function's result, into the store.
 */
import type { FunctionEvalSummary, PreparedPrompt, SampleTrace } from '../activities/eval/contracts';
import { evalActivityProxies } from './activities';
import { emptyEvalResult, evalPrompt, runHidden, sampleWithRepairs, tagEvalFunction, type EvalFunctionInput } from './eval-steps';
import { activityFailureReason } from './failures';
import { EVAL_PRIORITY as PRIORITY } from './priorities';
import { slidingWindow } from './window';

export async function evalFunctionWorkflow(input: EvalFunctionInput): Promise<FunctionEvalSummary> {
  const { run, item, settings } = input;
  const { io, llm, sandbox } = evalActivityProxies(input.queues, input.pipeline);
  tagEvalFunction(run, item);
  const result = emptyEvalResult(item.functionId);

  // The prompt: the dependency-only context with the target's body taken out.
  let prompt: PreparedPrompt | null = null;
  try {
    const made = await evalPrompt(llm, PRIORITY.prompt, run, item);
    if (made.ok) prompt = made.prompt;
    else {
      result.error = made.reason;
      result.unusedDocstringUsage = made.spent;
    }
  } catch (err) {
    result.error = activityFailureReason(err);
  }

  if (prompt) {
    result.prompt = prompt;
    const { promptKey, contextKey } = prompt;

    // Samples, each with its self-repair rounds; a sample's failure ends that sample only.
    const runSample = (sample: number): Promise<SampleTrace> =>
      sampleWithRepairs(sample, settings.repairRounds, {
        answer: () => llm(PRIORITY.sample).sampleCandidate({ run, item, promptKey, sample }),
        run: (ref, round) => runHidden(sandbox, round === 0 ? PRIORITY.sample : PRIORITY.repair, run, item, ref),
        repair: (ref, failed, round) => llm(PRIORITY.repair).repairCandidate({ run, item, contextKey, candidateKey: ref.candidateKey, resultKey: failed.resultKey, failure: failed.summary, round, sample }),
      });
    result.samples = await slidingWindow(
      Array.from({ length: settings.n }, (_, i) => i),
      settings.sampleWindow,
      runSample,
    );
    // The samples that say something of the model: not those whose first run the harness failed.
    const scored = result.samples.filter((s) => s.rounds.length > 0 && s.rounds[0]!.run.kind !== 'harness');
    const harnessFailed = result.samples.find((s) => s.rounds[0]?.run.kind === 'harness');
    if (scored.length === 0) {
      result.error = harnessFailed
        ? `the harness failed every sample that ran: ${harnessFailed.rounds[0]!.run.summary}`
        : `no sample could be evaluated: ${result.samples[0]?.error ?? 'none was asked for'}`;
    }

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
        result.ranking = await io.rankCandidates({ run, rows, truthRow, hidden: first.map((r) => r.run.passed), samples: scored.map((s) => s.sample) });
      } catch (err) {
        result.stepErrors.push(`ranking: ${activityFailureReason(err)}`);
      }
    }

    // Training data: the ground truth and every passing candidate, deduplicated.
    if (scored.length > 0 && settings.task === 'rft') {
      try {
        const passing = scored.flatMap((s) => s.rounds.filter((r) => r.run.passed && r.candidateKey).map((r) => ({ candidateKey: r.candidateKey!, sample: s.sample, round: r.round })));
        result.training = await sandbox(PRIORITY.training).collectTrainingTargets({ run, item, promptKey, passing });
      } catch (err) {
        result.stepErrors.push(`training targets: ${activityFailureReason(err)}`);
      }
    }
  }
  return io.writeEvalFunction({ run, item, result });
}
