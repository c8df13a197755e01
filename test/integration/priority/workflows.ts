/**
 * A workflow that schedules a backlog of LLM steps through the PRODUCTION proxies
 * (workflows/activities.ts) at the PRODUCTION priorities (workflows/priorities.ts), the pipeline's
 * and the evaluation's, all at once; the test serves them one at a time and watches the order.
 */
import type { PipelineSettings, TaskQueues } from '../../../activities/contracts';
import { activityProxies, evalActivityProxies } from '../../../workflows/activities';
import { EVAL_PRIORITY, PIPELINE_PRIORITY } from '../../../workflows/priorities';

/** The steps the backlog may hold, each as the pipeline or the evaluation schedules it. */
export const STEPS = {
  'pipeline sandbox': PIPELINE_PRIORITY.sandbox,
  'pipeline tests': PIPELINE_PRIORITY.tests,
  'pipeline debug': PIPELINE_PRIORITY.debug,
  'pipeline coverage': PIPELINE_PRIORITY.coverage,
  'pipeline checks': PIPELINE_PRIORITY.checks,
  'eval prompt': EVAL_PRIORITY.prompt,
  'eval sample': EVAL_PRIORITY.sample,
  'eval repair': EVAL_PRIORITY.repair,
  'eval ranking': EVAL_PRIORITY.ranking,
} as const;
export type Step = keyof typeof STEPS;

export async function priorityBacklogWorkflow(queues: TaskQueues, settings: PipelineSettings, backlog: Step[]): Promise<void> {
  const { llm } = activityProxies(queues, settings);
  const evaluation = evalActivityProxies(queues, settings);
  // The stand-in activities only record which step arrived: the input names it.
  const tag = (step: Step, i: number) => ({ label: `${i}:${step}` }) as never;
  const schedule: Record<Step, (i: number) => Promise<unknown>> = {
    'pipeline sandbox': (i) => llm(PIPELINE_PRIORITY.sandbox).generateSandboxScript(tag('pipeline sandbox', i)),
    'pipeline tests': (i) => llm(PIPELINE_PRIORITY.tests).generateTests(tag('pipeline tests', i)),
    'pipeline debug': (i) => llm(PIPELINE_PRIORITY.debug).debugScript(tag('pipeline debug', i)),
    'pipeline coverage': (i) => llm(PIPELINE_PRIORITY.coverage).improveCoverage(tag('pipeline coverage', i)),
    'pipeline checks': (i) => llm(PIPELINE_PRIORITY.checks).checkTests(tag('pipeline checks', i)),
    'eval prompt': (i) => evaluation.llm(EVAL_PRIORITY.prompt).prepareEvalPrompt(tag('eval prompt', i)),
    'eval sample': (i) => evaluation.llm(EVAL_PRIORITY.sample).sampleCandidate(tag('eval sample', i)),
    'eval repair': (i) => evaluation.llm(EVAL_PRIORITY.repair).repairCandidate(tag('eval repair', i)),
    'eval ranking': (i) => evaluation.llm(EVAL_PRIORITY.ranking).generateCandidateTests(tag('eval ranking', i)),
  };
  await Promise.all(backlog.map((step, i) => schedule[step](i)));
}
