/** The workflow bundle the workflow worker loads. */
export { crawlWorkflow } from './crawl';
export { repoWorkflow } from './repo';
export { functionWorkflow } from './function';
export { classWorkflow } from './class';
export { benchmarkWorkflow } from './benchmark';
export { evalWorkflow } from './eval-run';
export { evalFunctionWorkflow } from './eval-function';
export { augmentFunctionWorkflow } from './augment-function';
export { classEvalWorkflow, evalClassWorkflow } from './eval-class';
