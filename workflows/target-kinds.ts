/**
 * What the workflows decide by a target's kind, in one table: the workflow that tests it, its
 * workflow id and summary, how the UI names it, and whether the solvability stage applies (it
 * asks for a function from its prompt; a class is evaluated as a whole class). The activities'
 * side of a kind is activities/targets; this is the workflows' (deterministic, no I/O).
 */
import type { FunctionRef, TargetKind } from '../activities/contracts';
import { boundedDetails, boundedSummary, classWorkflowId, functionWorkflowId } from './ids';

export interface WorkflowKind {
  /** The workflow type that tests a target of this kind (registered by name). */
  workflowType: 'functionWorkflow' | 'classWorkflow';
  workflowId(runId: string, fn: FunctionRef): string;
  /** The child workflow's summary in the UI. */
  summary(fn: FunctionRef): string;
  /** How the UI names it. */
  noun: 'function' | 'class';
  /** Whether an evaluation record of this kind goes through the solvability stage. */
  solvable: boolean;
}

const WORKFLOW_KINDS: Record<TargetKind, WorkflowKind> = {
  function: {
    workflowType: 'functionWorkflow',
    noun: 'function',
    workflowId: functionWorkflowId,
    summary: (fn) => boundedSummary(`${fn.repoId} ${fn.path}::${fn.qualname}`),
    solvable: true,
  },
  class: {
    workflowType: 'classWorkflow',
    noun: 'class',
    workflowId: classWorkflowId,
    summary: (fn) => boundedSummary(`${fn.repoId} ${fn.path}::class ${fn.qualname}`),
    solvable: false,
  },
};

/** The workflows' side of a target's kind (a reference without one is a function's). */
export function workflowKind(fn: Pick<FunctionRef, 'kind'>): WorkflowKind {
  return WORKFLOW_KINDS[fn.kind ?? 'function'];
}

/** What a pipeline target is called in the UI: a class environment's target is a class, any other a function. */
export function targetNoun(target: Pick<FunctionRef, 'kind'>): 'class' | 'function' {
  return workflowKind(target).noun;
}

/**
 * The current details of a function's (or a class's) workflow in the UI: its stage and how the
 * step goes, then which target it is (`class` or `function`, repository, `path::qualname`, split).
 */
export function targetDetails(target: Pick<FunctionRef, 'kind'> & { repoId: string; path: string; qualname: string; split: string }, stage: string, detail: string): string {
  return boundedDetails(`**${stage}** ${detail}\n\n${targetNoun(target)} ${target.repoId} \`${target.path}::${target.qualname}\` (${target.split})`);
}
