import { functionWorkflowBudgetMs, repoWorkflowBudgetMs } from '../../../activities/workflow-budgets';
import { evalFunctionBudgetMs, evalPipelineSettings, parseEvalSettings } from '../../../activities/eval/settings';
import { pipelineSettingsFrom } from '../../../activities/run-settings';
import { loadConfig } from '../../../temporal.config';

const budgets = { llmMs: 1000, sandboxMs: 10_000, ioMs: 100, heartbeatMs: 30_000 };
const loops = { regenerateAttempts: 2, debugRounds: 3, coverageRounds: 2 };
const MARGIN = 5 * 60_000;

describe('child workflow time limits', () => {
  it('cover one full budget of every step a function can take one after another, plus retry backoff', () => {
    // io: prepare, record; llm: 3 sandbox + 3 tests answers, 3 debug, 2 coverage, 2 checks; sandbox: first run, 3 + 2 rounds, AST check.
    expect(functionWorkflowBudgetMs(budgets, loops)).toBe(2 * 100 + 13 * 1000 + 7 * 10_000 + 22 * MARGIN);
    expect(functionWorkflowBudgetMs(budgets, { ...loops, debugRounds: 5 })).toBeGreaterThan(functionWorkflowBudgetMs(budgets, loops));
  });

  it('add the stability check, the mutation score and each mutation round (an answer, a run, a stability check, a score) when the run asks for them', () => {
    const base = functionWorkflowBudgetMs(budgets, loops);
    expect(functionWorkflowBudgetMs(budgets, { ...loops, mutation: { enabled: false, rounds: 3 }, stability: { runs: { train: 0, eval: 0 } } })).toBe(base);
    expect(functionWorkflowBudgetMs(budgets, { ...loops, stability: { runs: { train: 0, eval: 3 } } })).toBe(base + 10_000 + MARGIN);
    expect(functionWorkflowBudgetMs(budgets, { ...loops, mutation: { enabled: true, rounds: 2 }, stability: { runs: { train: 3, eval: 3 } } })).toBe(
      base + (1 + 1 + 2 * 3) * (10_000 + MARGIN) + 2 * (1000 + MARGIN),
    );
  });

  it('give a repository one function budget per wave of its function window', () => {
    const one = functionWorkflowBudgetMs(budgets, loops);
    expect(repoWorkflowBudgetMs(budgets, loops, { maxFunctionsPerRepo: 30, functionWindow: 8 })).toBe(4 * one + 5 * (100 + MARGIN));
  });

  it('give an evaluation function its samples in waves, repair rounds and ranking', () => {
    const settings = parseEvalSettings({ n: 10, sampleWindow: 4, repairRounds: 2, select: 'genx', testSamples: 2 });
    // 3 waves; llm: 3 docstring answers + 3 x 3 answers + 1 test wave; sandbox: 3 x 3 runs + 3 matrix waves + the ground truth; io: result and two ranking steps.
    expect(evalFunctionBudgetMs(budgets, settings)).toBe(3 * 100 + 13 * 1000 + 13 * 10_000 + 29 * MARGIN);
    expect(evalFunctionBudgetMs(budgets, { ...settings, task: 'augment' })).toBe(100 + 1000 + 3 * 10_000 + 5 * MARGIN);
  });

  it('come from the configuration when set, else are derived, and are frozen with the run', () => {
    const derived = pipelineSettingsFrom(loadConfig({ env: {} }));
    expect(derived.timeouts.functionWorkflowMs).toBe(functionWorkflowBudgetMs(derived.timeouts, derived));
    expect(derived.timeouts.repoWorkflowMs).toBeGreaterThan(derived.timeouts.functionWorkflowMs!);
    const set = loadConfig({ env: { REPOST_TEMPORAL_CHILD_TIMEOUT_SEC_FUNCTION: '600', REPOST_TEMPORAL_CHILD_TIMEOUT_SEC_REPO: '7200', REPOST_TEMPORAL_CHILD_TIMEOUT_SEC_EVAL_FUNCTION: '900' } });
    expect(pipelineSettingsFrom(set).timeouts).toMatchObject({ functionWorkflowMs: 600_000, repoWorkflowMs: 7_200_000 });
    expect(evalPipelineSettings(set, parseEvalSettings({})).timeouts.functionWorkflowMs).toBe(900_000);
    const evalDerived = evalPipelineSettings(loadConfig({ env: {} }), parseEvalSettings({ n: 5 }));
    expect(evalDerived.timeouts.functionWorkflowMs).toBe(evalFunctionBudgetMs(evalDerived.timeouts, parseEvalSettings({ n: 5 })));
  });
});
