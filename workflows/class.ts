/**
 * One whole class through RepoST's sandbox testing: the function pipeline's stages
 * (functionWorkflow), each stage's activity doing its class variant for a class target:
 *   prepare: the class's source, and the context of everything any of its methods uses, then its
 *     own file with the whole class -> sandbox (LLM): the class kept whole and top-level in one
 *     standalone script -> tests (LLM): test functions building `Class` and
 *     `Class_new_implementation` from the same arguments, calling the same methods in the same
 *     order, asserting equal results, exception types and state -> execute with the original class
 *     copied in as `Class_new_implementation` -> up to k debug rounds -> coverage rounds until the
 *     threshold, coverage measured over all the class's methods (per method and overall) -> AST
 *     check of the sandboxed class against the original, LLM functionality check, LLM test check
 *   -> record: a `classes-dataset.jsonl` line, or a rejection with its stage and reason.
 * The stages, their order, rounds, thresholds and rejections are the function's: only what each
 * step asks, checks and measures is the class's.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import type { ClassRef, FunctionOutcome, FunctionRef } from '../activities/contracts';
import { functionWorkflow, type FunctionWorkflowInput } from './function';
import { workflowKind } from './target-kinds';

export interface ClassWorkflowInput extends FunctionWorkflowInput {
  fn: ClassRef;
}

export async function classWorkflow(input: ClassWorkflowInput): Promise<FunctionOutcome> {
  const fn: FunctionRef = input.fn;
  if (workflowKind(fn).workflowType !== 'classWorkflow') throw ApplicationFailure.nonRetryable(`classWorkflow was given ${fn.qualname}, which is not a class target`, 'NotAClass');
  return functionWorkflow(input);
}
