/**
 * Selection presets: `default` (this factory's filters) and `repost` (RepoST's published
 * selection, as its code has it: the R2E extractors it ships, its sampling and its crawl scripts).
 * This file holds the numbers and the configuration layer a preset puts under the user's own
 * settings; the rules themselves are in `repost-rules.ts`.
 */

export const ANALYSIS_PRESETS = ['default', 'repost'] as const;
export type AnalysisPreset = (typeof ANALYSIS_PRESETS)[number];

/** RepoST's numbers, each where its published code sets it. */
export const REPOST_SELECTION = {
  /** A function is kept when its body has fewer code lines than this (statements as `ast.unparse` writes them, docstring left out). */
  maxFunctionCodeLines: 25,
  /** The same for a method. */
  maxMethodCodeLines: 20,
  /** Functions and, separately, methods sampled per repository (sample_functions.py --func_num: ExecTrain 20, ExecEval 15). */
  perKind: { train: 20, eval: 15 },
  /** Context budget in tokens (get_context.py --max_context_size: ExecTrain 6000, ExecEval 8000). */
  contextTokens: { train: 6000, eval: 8000 },
  /**
   * Both splits take functions without a docstring too, sampling documented ones first: the
   * ExecTrain script extracts with and without the docstring rules, and although the ExecEval
   * script has the second extraction commented out, 120 of the 296 published ExecEval records
   * have no docstring, so the published set was built from both.
   */
  requireDocstring: { train: false, eval: false },
  /** Words of the docstring (tokenized, lower case) that drop a function. */
  docstringWords: ['test', 'transformer', 'training', 'https', 'http', 'todo'],
  /** Names used in the function, or whole string constants, that drop it (lower case). */
  bodyWords: [
    'demo', 'gcp', 's3', 'openai', 'aws', 'cuda', 'tensorflow', 'triton', 'gpu', 'nvidia', 'scheduler', 'async', 'job',
    'do_not_import', 'do_not_run', 'do_not_call', 'plt', 'plot', 'matplotlib', 'seaborn', 'plotly', 'argparse', 'main',
    'cuda_visible_devices', 'multiprocess', 'multiprocessing', 'pool', 'processpool', 'threadpool', 'joblib', 'pebble',
  ],
  /** Name prefixes (lower case) that drop a function. */
  namePrefixes: ['test', 'train_', 'main', 'demo', 'example', 'render_pep', '_init'],
  /** Decorators a method may have (a function may have none). */
  methodDecorators: ['staticmethod', 'classmethod'],
  /** A function is dropped when more than this share of its returns (in its body's own statements) return a constant. */
  constantReturnShare: 2 / 3,
  /** The GitHub crawl (ExecTrain/ExecEval_scrape_repos.sh, sample_repo.py, filter_repos_by_size.py). */
  repositories: {
    license: 'mit',
    /** `size:<5000` in the search (GitHub's size, in KB). */
    searchSizeBelowKb: 5000,
    created: { train: { from: '2023-01-01', to: '2024-08-31' }, eval: { from: '2024-09-01', to: '2024-12-31' } },
    /** Repositories sampled from the search results (sample_repo.py --sampled_size). */
    sample: { train: 1000, eval: 300 },
  },
} as const;

/** The per-repository cap the preset lays under the user's: room for both kinds of the larger split's sample. */
export const REPOST_MAX_PER_REPO = 2 * Math.max(REPOST_SELECTION.perKind.train, REPOST_SELECTION.perKind.eval);

/**
 * What `analysis.preset=repost` puts under the configuration the user gave: RepoST's GitHub
 * search filters (`crawl.github`), a per-repository cap (`crawl.maxFunctionsPerRepo`) that
 * holds RepoST's whole sample and its context budget per split (`analysis.contextTokenBudget.{train,eval}`).
 * Every value the preset sets is here, and nothing lays a preset over the configuration later:
 * values the user set (file, environment, flags) stay theirs, so a smaller
 * `crawl.maxFunctionsPerRepo` caps the preset's sample and an explicit budget is the budget.
 */
export function presetConfigLayer(preset: AnalysisPreset | undefined): Record<string, unknown> {
  if (preset !== 'repost') return {};
  const r = REPOST_SELECTION.repositories;
  return {
    analysis: { contextTokenBudget: { ...REPOST_SELECTION.contextTokens } },
    crawl: {
      maxFunctionsPerRepo: REPOST_MAX_PER_REPO,
      github: {
        licenses: [r.license],
        maxRepoSizeKb: r.searchSizeBelowKb - 1,
        trainWindow: { ...r.created.train },
        evalWindow: { ...r.created.eval },
        // RepoST's search does not leave archived repositories out.
        includeArchived: true,
      },
    },
  };
}
