/** The workflow bundle the workflow worker loads. */
export { crawlWorkflow } from './crawl';
export { repoWorkflow } from './repo';
export { functionWorkflow } from './function';
export { benchmarkWorkflow } from './benchmark';
export { evalWorkflow, evalFunctionWorkflow, augmentFunctionWorkflow } from './eval';
