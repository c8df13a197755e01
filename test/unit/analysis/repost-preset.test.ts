/**
 * The `repost` selection preset: RepoST's published candidate rules, line limits, per-kind
 * sampling and crawl filters. The verdicts on the fixture repository `repost_preset` are counted
 * by hand (each of its functions is written to meet one rule). What the rules read of a function
 * is checked against Python's own `ast` in test/integration/analysis/repost-measures.test.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { applyRunSettings, overrideRunSettings, parseSettingOverrides, runSettingsFrom } from '../../../activities/run-settings';
import { chooseCandidates, RepositoryAnalyzer, type FunctionEntry } from '../../../activities/analysis';
import { docstringWords, joinDots } from '../../../activities/analysis/repost-rules';
import { loadConfig } from '../../../temporal.config';
import { REPOST_SAMPLE } from '../../support/fixtures';

const REPOS = path.resolve(__dirname, '../../fixtures/repos');
const FIXTURE = path.join(REPOS, 'repost_preset');
/** Verdicts by hand: function -> the rule that drops it (null: kept); the same for both splits. */
const BY_HAND: Record<string, string | null> = {
  '.hidden/helper.py::tool_sum': 'hidden-path',
  'calc/core.py::clamp': null,
  'calc/core.py::scale': null,
  'calc/core.py::__private_helper': 'dunder',
  'calc/core.py::constant': 'no-arguments',
  'calc/core.py::side_effect': 'no-return',
  'calc/core.py::sign': 'constant-returns',
  'calc/core.py::fetch_page': null,
  'calc/core.py::render': 'body-word:plt',
  'calc/core.py::example_usage': 'name-prefix:example',
  'calc/core.py::cached_square': 'decorator',
  'calc/core.py::identity': 'one-statement',
  'calc/core.py::hypotenuse': 'too-long',
  'calc/core.py::weighted_mean': null,
  'calc/core.py::tabulate': null,
  'calc/core.py::call_entry': 'body-word:main',
  'calc/core.py::fetch_later': 'not-top-level',
  'calc/core.py::conditional': 'not-top-level',
  'calc/shapes.py::Circle.__init__': 'dunder',
  'calc/shapes.py::Circle.area': 'wrapper-method',
  'calc/shapes.py::Circle.describe': null,
  'calc/shapes.py::Circle.scaled': null,
  'calc/shapes.py::Circle.diameter': 'decorator',
  'calc/shapes.py::Circle.unit_area': null,
  'calc/shapes.py::Circle.is_big': 'constant-returns',
  'calc/shapes.py::Circle.test_radius': 'name-prefix:test',
  'calc/shapes.py::Circle.job_summary': null,
  'calc/shapes.py::Circle.perimeter': 'too-long',
  'calc/shapes.py::Circle.refresh': 'not-top-level',
  'calc/shapes.py::Circle.Style.colour': 'not-top-level',
  'scripts/unit-convert.py::convert': 'dash-in-path',
};

const key = (f: { path: string; qualname: string }) => `${f.path}::${f.qualname}`;
const countBy = (xs: (string | null)[]) => xs.reduce<Record<string, number>>((m, x) => ((m[x ?? 'kept'] = (m[x ?? 'kept'] ?? 0) + 1), m), {});

describe('the repost preset on a fixture repository counted by hand', () => {
  it.each(['train', 'eval'] as const)('%s split: every verdict and the filter counts', async (split) => {
    const analyzer = await RepositoryAnalyzer.open(FIXTURE, { preset: 'repost', split });
    const functions = analyzer.functions();
    expect(Object.fromEntries(functions.map((f) => [key(f), f.droppedBy]))).toEqual(BY_HAND);
    // 31 functions and methods: 9 kept (5 functions, 4 methods), 22 dropped.
    expect(countBy(functions.map((f) => f.droppedBy))).toEqual({
      kept: 9,
      'not-top-level': 4,
      'hidden-path': 1,
      'dash-in-path': 1,
      dunder: 2,
      'no-arguments': 1,
      'no-return': 1,
      'constant-returns': 2,
      'body-word:plt': 1,
      'body-word:main': 1,
      'name-prefix:example': 1,
      'name-prefix:test': 1,
      decorator: 2,
      'one-statement': 1,
      'wrapper-method': 1,
      'too-long': 2,
    });
    // All kept ones are candidates (fewer than RepoST's 20 or 15 per kind). Those that pass with
    // their docstring are sampled first: not scale and Circle.scaled (none), fetch_page (http)
    // and Circle.job_summary (TODO).
    const chosen = analyzer.candidates();
    expect(chosen.map(key)).toEqual(functions.filter((f) => f.kept).map(key));
    const first = chosen.filter((f) => f.sampledFirst).map((f) => f.qualname);
    expect(first).toEqual(['clamp', 'weighted_mean', 'tabulate', 'Circle.describe', 'Circle.unit_area']);
  });

  it("keeps every one of RepoST's 40 published evaluation records in the fixtures (each in a repository of its own)", () => {
    const records = fs
      .readFileSync(REPOST_SAMPLE, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { func_name: string; func_path: string; orig_func: string });
    const verdicts = records.map((r) => {
      const [owner, ...rest] = r.func_name.split('.');
      // A method goes back into its class (RepoST's orig_func is the method dedented).
      const source = rest.length ? `class ${owner}:\n${r.orig_func.replace(/^(?=.)/gm, '    ')}\n` : `${r.orig_func}\n`;
      const analyzer = RepositoryAnalyzer.fromSources({ [r.func_path]: source }, { preset: 'repost', split: 'eval' });
      const f = analyzer.functions().find((x) => x.qualname === r.func_name);
      return f ? f.droppedBy : 'missing';
    });
    expect(verdicts).toHaveLength(40);
    expect(verdicts.filter((v) => v !== null)).toEqual([]);
  });

  it('the default selection of the same repository, for comparison', async () => {
    const functions = (await RepositoryAnalyzer.open(FIXTURE, {})).functions();
    expect(functions.filter((f) => f.kept)).toHaveLength(21);
    expect(countBy(functions.filter((f) => !f.kept).map((f) => f.droppedBy))).toEqual({
      'no-arguments': 5,
      'keyword:plotting': 1,
      'keyword:async': 2,
      dunder: 1,
      'test-code': 1,
    });
  });
});

/** A candidate as the sampling sees it. */
const entry = (i: number, kind: 'function' | 'method', sampledFirst: boolean, kept = true): FunctionEntry => ({
  path: 'm.py',
  qualname: kind === 'method' ? `C.f${i}` : `f${i}`,
  name: `f${i}`,
  kind,
  startLine: i,
  endLine: i,
  signature: '',
  docstring: null,
  decorators: [],
  returns: true,
  source: '',
  kept,
  droppedBy: kept ? null : 'dunder',
  id: `${kind}-${i}`,
  occurrence: 0,
  ...(kept ? { sampledFirst } : {}),
});

describe('sampling as RepoST does', () => {
  it('a smaller per-repository cap the user set wins over the sample, documented ones first', () => {
    // 30 functions (12 documented), 10 methods (all documented): RepoST's sample is 30 of them.
    const functions = [
      ...Array.from({ length: 30 }, (_, i) => entry(i, 'function', i % 5 < 2)),
      ...Array.from({ length: 10 }, (_, i) => entry(100 + i, 'method', true)),
    ];
    const four = chooseCandidates(functions, { preset: 'repost', split: 'train', max: 4, seed: 0 });
    expect(four).toHaveLength(4);
    expect(four.every((f) => f.kept && f.sampledFirst)).toBe(true);
    expect(new Set(four).size).toBe(4);
    expect(chooseCandidates(functions, { preset: 'repost', split: 'train', max: 4, seed: 0 })).toEqual(four);
    // 22 of the sample are documented: a cap of 27 takes them all and 5 others.
    const most = chooseCandidates(functions, { preset: 'repost', split: 'train', max: 27, seed: 0 });
    expect(most.filter((f) => f.sampledFirst)).toHaveLength(22);
    expect(most).toHaveLength(27);
  });

  it('per kind: at most 20 (train) or 15 (eval), documented ones first, in file order', () => {
    // 30 functions (12 documented), 10 methods (all documented), 5 dropped.
    const functions = [
      ...Array.from({ length: 30 }, (_, i) => entry(i, 'function', i % 5 < 2)),
      ...Array.from({ length: 10 }, (_, i) => entry(100 + i, 'method', true)),
      ...Array.from({ length: 5 }, (_, i) => entry(200 + i, 'function', false, false)),
    ];
    const train = chooseCandidates(functions, { preset: 'repost', split: 'train', max: 40, seed: 0 });
    expect(train.filter((f) => f.kind === 'function')).toHaveLength(20);
    expect(train.filter((f) => f.kind === 'function' && f.sampledFirst)).toHaveLength(12);
    expect(train.filter((f) => f.kind === 'method')).toHaveLength(10);
    expect(train.every((f) => f.kept)).toBe(true);
    const evalSplit = chooseCandidates(functions, { preset: 'repost', split: 'eval', max: 40, seed: 0 });
    // 15 functions, all from the 12 documented plus 3 others; the 10 methods.
    expect(evalSplit.filter((f) => f.kind === 'function')).toHaveLength(15);
    expect(evalSplit.filter((f) => f.kind === 'function' && f.sampledFirst)).toHaveLength(12);
    expect(evalSplit.filter((f) => f.kind === 'method')).toHaveLength(10);
    // In file order, and reproducible from the seed.
    expect(train.map((f) => f.startLine)).toEqual([...train.map((f) => f.startLine)].sort((a, b) => a - b));
    expect(chooseCandidates(functions, { preset: 'repost', split: 'train', max: 40, seed: 0 })).toEqual(train);
    // 25 documented functions: a sample of 20 of them, no undocumented one.
    const many = Array.from({ length: 25 }, (_, i) => entry(i, 'function', true)).concat(Array.from({ length: 5 }, (_, i) => entry(50 + i, 'function', false)));
    const sampled = chooseCandidates(many, { preset: 'repost', split: 'train', max: 40, seed: 7 });
    expect(sampled).toHaveLength(20);
    expect(sampled.every((f) => f.sampledFirst)).toBe(true);
    // The default preset takes `max` of the kept ones.
    expect(chooseCandidates(functions, { preset: 'default', split: 'train', max: 3, seed: 0 })).toHaveLength(3);
  });
});

describe('docstring words, as the tokenizer RepoST uses splits them', () => {
  it.each([
    ['TODO: speed it up', ['todo']],
    ['See http://example.org for more.', ['http']],
    ["The test's inputs (test).", ['test']],
    ['A test-driven helper for test/train splits', []],
    ['Runs tests on training data', ['training']],
  ])('%s', (doc, hits) => {
    const words = docstringWords(doc);
    expect(['test', 'transformer', 'training', 'https', 'http', 'todo'].filter((w) => words.has(w))).toEqual(hits);
  });
});

describe('what the rules read of a repository is read in one pass, whatever its size', () => {
  // Inputs on which regular expressions such as /[...]+$/ and /\s*\.\s*/g rescan a run at every
  // position (quadratic: seconds for 40 KB, most of an hour for a 1 MB file the analysis accepts);
  // here each must simply be read, with the right result, in the test's run.
  it('a 1 MB docstring word of closing punctuation not at its end', () => {
    const word = `${')'.repeat(1_000_000)}a`;
    expect(docstringWords(word)).toEqual(new Set([word]));
    expect(docstringWords(`todo${')'.repeat(1_000_000)}`)).toEqual(new Set(['todo']));
  });

  it('a 1 MB statement of white space between dots', () => {
    const spaces = ' '.repeat(1_000_000);
    expect(joinDots(`self${spaces}.${spaces}x${spaces}y`)).toBe(`self.x${spaces}y`);
  });

  it('takes the white space around dots out as the regular expression did', () => {
    for (const text of ['self . x', 'a.b', ' . ', '.', '', 'x  .\n  y . z ', 'no dots  here', '1 .5', 'self.\tx', ' a . ', '..', ' . . ']) {
      expect(joinDots(text)).toBe(text.replace(/\s*\.\s*/g, '.'));
    }
  });
});

describe('the preset in the configuration', () => {
  it("puts RepoST's GitHub search filters under the user's own settings", () => {
    const config = loadConfig({ env: { REPOST_CRAWL_GITHUB_MIN_STARS: '3' }, overrides: { analysis: { preset: 'repost' } } });
    expect(config.analysis.preset).toBe('repost');
    expect(config.crawl.github).toEqual({
      licenses: ['mit'],
      maxRepoSizeKb: 4999,
      trainWindow: { from: '2023-01-01', to: '2024-08-31' },
      evalWindow: { from: '2024-09-01', to: '2024-12-31' },
      includeArchived: true,
      minStars: 3,
      // The download's limits are not search filters: the preset leaves their defaults.
      maxTarballMb: 100,
      downloadTimeoutSec: 600,
    });
    // A value the user gives wins over the preset's.
    const mine = loadConfig({ env: { REPOST_ANALYSIS_PRESET: 'repost', REPOST_CRAWL_GITHUB_MAX_REPO_SIZE_KB: '2048' } });
    expect(mine.crawl.github.maxRepoSizeKb).toBe(2048);
    expect(mine.crawl.github.licenses).toEqual(['mit']);
    // Without the preset, the defaults stay.
    expect(loadConfig({ env: {} }).crawl.github).toMatchObject({ maxRepoSizeKb: 10 * 1024, includeArchived: false, trainWindow: { from: '2023-01-31' } });
  });

  it('holds the whole sample under its per-repository cap, and a cap the user sets wins (file, environment or flag)', () => {
    expect(loadConfig({ env: {}, overrides: { analysis: { preset: 'repost' } } }).crawl.maxFunctionsPerRepo).toBe(40);
    expect(loadConfig({ env: {} }).crawl.maxFunctionsPerRepo).toBe(30);
    const capped = loadConfig({ env: { REPOST_CRAWL_MAX_FUNCTIONS_PER_REPO: '4' }, overrides: { analysis: { preset: 'repost' } } });
    expect(capped.crawl.maxFunctionsPerRepo).toBe(4);
    expect(loadConfig({ env: { REPOST_ANALYSIS_PRESET: 'repost' }, overrides: { crawl: { maxFunctionsPerRepo: 4 } } }).crawl.maxFunctionsPerRepo).toBe(4);
    // The crawl's selection then takes 4 of a repository's candidates.
    const many = Array.from({ length: 30 }, (_, i) => entry(i, 'function', i % 2 === 0));
    expect(chooseCandidates(many, { preset: 'repost', split: 'train', max: capped.crawl.maxFunctionsPerRepo, seed: capped.crawl.seed })).toHaveLength(4);
  });

  it('lays its context budget per split under the configuration: a budget the user gives wins (file, environment, --set), even one equal to the default', () => {
    const repost = { analysis: { preset: 'repost' as const } };
    // Not given: the preset's own, 6000 tokens for training, 8000 for evaluation; without it, 8000 both.
    expect(loadConfig({ env: {}, overrides: repost }).analysis.contextTokenBudget).toEqual({ train: 6000, eval: 8000 });
    expect(loadConfig({ env: {} }).analysis.contextTokenBudget).toEqual({ train: 8000, eval: 8000 });

    // The file, under the new key and under the old single-value one (read for both splits, with a warning).
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-preset-'));
    const file = (name: string, content: unknown) => {
      const f = path.join(dir, name);
      fs.writeFileSync(f, JSON.stringify(content));
      return f;
    };
    const own = file('own.json', { analysis: { preset: 'repost', contextTokenBudget: { train: 8000 } } });
    expect(loadConfig({ env: { REPOST_CONFIG: own } }).analysis.contextTokenBudget).toEqual({ train: 8000, eval: 8000 });
    const warnings: string[] = [];
    const old = file('old.json', { analysis: { contextTokenBudget: 3000 } });
    expect(loadConfig({ env: { REPOST_CONFIG: old }, overrides: repost, warn: (m) => warnings.push(m) }).analysis.contextTokenBudget).toEqual({ train: 3000, eval: 3000 });
    expect(warnings).toEqual([
      `${old}: analysis.contextTokenBudget is now analysis.contextTokenBudget.train (a value per split); the old name is read until the next release`,
      `${old}: analysis.contextTokenBudget is now analysis.contextTokenBudget.eval (a value per split); the old name is read until the next release`,
    ]);

    // The environment: the key's own variable, and the old one.
    expect(loadConfig({ env: { REPOST_ANALYSIS_PRESET: 'repost', REPOST_ANALYSIS_CONTEXT_TOKEN_BUDGET_TRAIN: '8000' } }).analysis.contextTokenBudget).toEqual({ train: 8000, eval: 8000 });
    expect(loadConfig({ env: { REPOST_ANALYSIS_PRESET: 'repost', REPOST_ANALYSIS_CONTEXT_TOKEN_BUDGET_EVAL: '0' } }).analysis.contextTokenBudget).toEqual({ train: 6000, eval: 0 });
    expect(loadConfig({ env: { REPOST_ANALYSIS_PRESET: 'repost', REPOST_ANALYSIS_CONTEXT_TOKEN_BUDGET: '5000' }, warn: () => undefined }).analysis.contextTokenBudget).toEqual({ train: 5000, eval: 5000 });

    // --set, at the start (as overrides beside the preset) and on a run frozen with the preset's values.
    const set = parseSettingOverrides(['analysis.contextTokenBudget.train=8000']);
    expect(loadConfig({ env: {}, overrides: { ...repost, ...set } }).analysis.contextTokenBudget).toEqual({ train: 8000, eval: 8000 });
    const frozen = runSettingsFrom(loadConfig({ env: {}, overrides: repost }));
    const replayed = overrideRunSettings(frozen, parseSettingOverrides(['analysis.contextTokenBudget=7000'], () => undefined));
    expect((replayed.config.analysis as { contextTokenBudget: unknown }).contextTokenBudget).toEqual({ train: 7000, eval: 7000 });
    expect((frozen.config.analysis as { contextTokenBudget: unknown }).contextTokenBudget).toEqual({ train: 6000, eval: 8000 });

    // A run frozen when the budget was one value and the preset overrode it keeps the budgets it used.
    const worker = loadConfig({ env: {} });
    const before = { ...frozen, config: { ...frozen.config, analysis: { ...(frozen.config.analysis as object), contextTokenBudget: 8000 } } };
    expect(applyRunSettings(worker, before).analysis.contextTokenBudget).toEqual({ train: 6000, eval: 8000 });
    const plain = { ...before, config: { ...before.config, analysis: { ...(before.config.analysis as object), preset: 'default' } } };
    expect(applyRunSettings(worker, plain).analysis.contextTokenBudget).toEqual({ train: 8000, eval: 8000 });
  });

  it("keeps the preset's other filters when a key beside them is set (one part of a window, another crawl key)", () => {
    const config = loadConfig({ env: { REPOST_ANALYSIS_PRESET: 'repost', REPOST_CRAWL_SEED: '5', REPOST_CRAWL_GITHUB_EVAL_WINDOW_FROM: '2024-10-01' } });
    expect(config.crawl.seed).toBe(5);
    expect(config.crawl.github.evalWindow).toEqual({ from: '2024-10-01', to: '2024-12-31' });
    expect(config.crawl.github).toMatchObject({ maxRepoSizeKb: 4999, includeArchived: true, trainWindow: { from: '2023-01-01', to: '2024-08-31' } });
  });
});
