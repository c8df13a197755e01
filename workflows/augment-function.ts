/**
 * One function of a test augmentation (GenX's, for building datasets): inputs (LLM) -> the ground
 * truth's values on them in several separate runs (sandbox) -> the inputs that gave the same value
 * every time become one more test, kept only if the script still passes with the ground truth ->
 * the function's result, into the store.
 */
import type { FunctionEvalSummary } from '../activities/eval/contracts';
import { evalActivityProxies } from './activities';
import { emptyEvalResult, tagEvalFunction, type EvalFunctionInput } from './eval-steps';
import { activityFailureReason } from './failures';
import { AUGMENT_PRIORITY as PRIORITY } from './priorities';

export async function augmentFunctionWorkflow(input: EvalFunctionInput): Promise<FunctionEvalSummary> {
  const { run, item, settings } = input;
  const { io, llm, sandbox } = evalActivityProxies(input.queues, input.pipeline);
  tagEvalFunction(run, item);
  const result = emptyEvalResult(item.functionId);
  try {
    const proposal = await llm(PRIORITY.inputs).proposeTestInputs({ run, item, attempt: 0 });
    // Separate runs are separate processes: hash seeds, clocks and addresses differ between them.
    const outputsKeys: string[] = [];
    if (proposal.count > 0) {
      for (let r = 0; r < settings.determinismRuns; r++) outputsKeys.push((await sandbox(PRIORITY.groundTruth).runCaseOutputs({ run, item, casesKey: proposal.casesKey, attempt: r })).outputsKey);
    }
    const augmented = await sandbox(PRIORITY.check).augmentScript({ run, item, casesKey: proposal.casesKey, outputsKeys });
    result.augmentation = { ...augmented, usage: proposal.usage };
  } catch (err) {
    result.error = activityFailureReason(err);
  }
  return io.writeEvalFunction({ run, item, result });
}
