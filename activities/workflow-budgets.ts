/**
 * How long a child workflow (a repository, a function, an evaluation's function) may run before
 * Temporal ends it, so no parent waits forever on a child that is stuck (a worker pool that never
 * comes back, a step that keeps failing over to another worker). A child that times out becomes a
 * recorded outcome of its parent with the reason, like any other failed child.
 *
 * Unless the configuration sets them (`temporal.childTimeoutSec.*`), the limits are derived from
 * the activity budgets: the sum of one full budget (`startToCloseTimeout`) of every step the child
 * can take one after another, plus a margin per step for Temporal's retry backoff. A child on
 * time never comes near it: steps rarely take their whole budget, let alone all of them. (An
 * evaluation's function has its own steps: `evalFunctionBudgetMs` in eval/settings.ts.)
 */
import type { PipelineSettings, SolvabilitySettings } from './contracts';

export type Budgets = PipelineSettings['timeouts'];
type Loops = Pick<PipelineSettings, 'regenerateAttempts' | 'debugRounds' | 'coverageRounds'> & {
  mutation?: Pick<NonNullable<PipelineSettings['mutation']>, 'enabled' | 'rounds'>;
  stability?: Pick<NonNullable<PipelineSettings['stability']>, 'runs'>;
  solvability?: Pick<SolvabilitySettings, 'enabled' | 'k' | 'rounds'>;
};

/** Answers for a generated docstring before it counts as unusable (the solvability stage and an evaluation's prompt). */
export const DOCSTRING_ATTEMPTS = 3;

/** Backoff between retries of one step (the transient-fault retry policy waits about 4.5 minutes in all). */
const RETRY_MARGIN_MS = 5 * 60_000;

/** Steps of each kind taken one after another, and what they may take in all (an evaluation's function: eval/settings.ts). */
export function stepsBudgetMs(budgets: Budgets, steps: { io: number; llm: number; sandbox: number }): number {
  return steps.io * budgets.ioMs + steps.llm * budgets.llmMs + steps.sandbox * budgets.sandboxMs + (steps.io + steps.llm + steps.sandbox) * RETRY_MARGIN_MS;
}

/**
 * One function of a crawl: prepare and the record (io); the sandbox and test answers with their
 * regenerations, the debug, coverage and mutation rounds and the two LLM checks; the first run, a
 * run per round, the stability check and the mutation score (and in a mutation round each of the
 * three again) and the AST check; and when a split has the solvability stage, its steps: the
 * task, a docstring, k answers and runs, and per round the failing assertions (io), a judge per
 * answer, the removal (io), the ground truth's run and the k runs again.
 */
export function functionWorkflowBudgetMs(budgets: Budgets, loops: Loops): number {
  const attempts = loops.regenerateAttempts + 1;
  const runs = loops.stability?.runs;
  const stability = runs && (runs.train > 0 || runs.eval > 0) ? 1 : 0;
  const mutation = loops.mutation?.enabled ? 1 : 0;
  const mutationRounds = mutation ? (loops.mutation?.rounds ?? 0) : 0;
  const s = loops.solvability;
  const solvable = s && (s.enabled.train || s.enabled.eval) ? s : null;
  return stepsBudgetMs(budgets, {
    io: 2 + (solvable ? 1 + 2 * solvable.rounds : 0),
    llm: 2 * attempts + loops.debugRounds + loops.coverageRounds + mutationRounds + 2 + (solvable ? DOCSTRING_ATTEMPTS + solvable.k * (1 + solvable.rounds) : 0),
    sandbox:
      1 + loops.debugRounds + loops.coverageRounds + stability + mutation + mutationRounds * (2 + stability) + 1 +
      (solvable ? solvable.k + solvable.rounds * (1 + solvable.k) : 0),
  });
}

/**
 * One repository: its snapshot, its candidate listing and pages, its outcome (io), and its
 * functions in waves of the function window, each wave a function's budget.
 */
export function repoWorkflowBudgetMs(budgets: Budgets, loops: Loops, crawl: { maxFunctionsPerRepo: number; functionWindow: number }): number {
  const waves = Math.ceil(crawl.maxFunctionsPerRepo / crawl.functionWindow);
  const pages = Math.ceil(crawl.maxFunctionsPerRepo / 100) + 1;
  return stepsBudgetMs(budgets, { io: 3 + pages, llm: 0, sandbox: 0 }) + waves * functionWorkflowBudgetMs(budgets, loops);
}

/**
 * A crawl of `repositories` repositories run as a child (a live benchmark's firing): the configured
 * limit, else its source pages, its repositories in waves of the repository window (each wave a
 * repository's limit and the write of its outcome should it fail), its summary and its files.
 * Undefined for settings frozen before repositories had a limit: then none applies.
 */
export function crawlWorkflowBudgetMs(settings: Pick<PipelineSettings, 'timeouts' | 'repoWindow' | 'continueAsNewAfter'>, repositories: number): number | undefined {
  const { timeouts } = settings;
  if (timeouts.crawlWorkflowMs !== undefined) return timeouts.crawlWorkflowMs;
  if (timeouts.repoWorkflowMs === undefined) return undefined;
  const waves = Math.ceil(repositories / settings.repoWindow);
  const pages = Math.ceil(repositories / settings.continueAsNewAfter) + 1;
  return stepsBudgetMs(timeouts, { io: pages + 2, llm: 0, sandbox: 0 }) + waves * (timeouts.repoWorkflowMs + stepsBudgetMs(timeouts, { io: 1, llm: 0, sandbox: 0 }));
}
