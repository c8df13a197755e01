/**
 * The dataset card (`README.md`) of an export: YAML front matter the Hugging Face Hub and the
 * `datasets` library read (license(s), configs with one data file pattern per split, features,
 * split sizes), then for people: what the dataset is, RepoST's Table 4 figures, how it was built
 * (the run's settings, model and prompt versions), its fields, how to use it, and the source
 * repositories with their licenses.
 */
import type { DatasetSplit } from '../dataset/product-record';
import { settingRows } from '../dataset/settings-view';
import type { RunInfo, RunSummaryView } from '../dataset/run-reader';
import { solveRateBars, type SolvabilityFigures } from '../dataset/solvability-figures';
import type { DatasetStatistics } from '../dataset/statistics';
import type { TestStrength } from '../dataset/test-strength';
import { TABLE_4_ROWS, formatFigure } from '../dataset/table-4';
import { CLASS_ENVIRONMENT_COLUMNS } from './class-columns';
import { EXPORT_COLUMNS, huggingFaceFeatures, type ExportColumn } from './columns';
import { toYaml, type YamlValue } from './yaml';

/**
 * License ids the Hub knows that GitHub's license keys can be; GitHub keys outside it become
 * 'other' in the front matter (the card's table keeps the original key).
 */
const HUB_LICENSES = new Set(
  (
    'apache-2.0 mit bsd bsd-2-clause bsd-3-clause bsd-3-clause-clear bsl-1.0 cc0-1.0 cc-by-4.0 cc-by-sa-4.0 ecl-2.0 epl-1.0 ' +
    'epl-2.0 eupl-1.1 eupl-1.2 agpl-3.0 gpl gpl-2.0 gpl-3.0 lgpl lgpl-2.1 lgpl-3.0 isc lppl-1.3c ms-pl mpl-2.0 odbl osl-3.0 ' +
    'postgresql ofl-1.1 ncsa unlicense zlib wtfpl afl-3.0 artistic-2.0 unknown other'
  ).split(' '),
);
const GITHUB_TO_HUB: Record<string, string> = { 'odbl-1.0': 'odbl' };

export function hubLicenseId(key: string): string {
  const id = GITHUB_TO_HUB[key] ?? key;
  return HUB_LICENSES.has(id) ? id : 'other';
}

export interface CardSplit {
  name: DatasetSplit;
  /** Path of the split's data file, relative to the card. */
  path: string;
  rows: number;
  /** The thresholds the split's records carry (empty when the records predate them). */
  coverageThresholds: number[];
  astCheckRequired: boolean[];
}

export interface DatasetCardInput {
  runId: string;
  info: RunInfo;
  summary: RunSummaryView;
  statistics: DatasetStatistics;
  /** The exported records' mutation scores and stability verdicts. */
  testStrength?: TestStrength;
  splits: CardSplit[];
  /** Source repositories with their license key, where it came from, and number of records. */
  repositories: { repo: string; license: string; licenseSource?: string; records: number }[];
  /** `template@version` per step, with the number of records that used it. */
  promptVersions: { step: string; version: string; records: number }[];
  /** The solvability stage's figures over the exported records. */
  solvability?: SolvabilityFigures;
  exportedAt: string;
  /** The class environments' splits (the `classes` configuration), when the run made any. */
  classSplits?: CardSplit[];
}

function sizeCategory(n: number): string {
  if (n < 1000) return 'n<1K';
  if (n < 10_000) return '1K<n<10K';
  if (n < 100_000) return '10K<n<100K';
  if (n < 1_000_000) return '100K<n<1M';
  return '1M<n<10M';
}

function frontMatter(input: DatasetCardInput): string {
  const classSplits = input.classSplits ?? [];
  const licenses = [...new Set(input.repositories.map((r) => hubLicenseId(r.license)))].sort();
  const total = input.splits.reduce((sum, s) => sum + s.rows, 0);
  const yaml: { [key: string]: YamlValue } = {
    license: licenses.length === 1 ? licenses[0]! : licenses.length === 0 ? 'unknown' : licenses,
    pretty_name: `RepoST-style coding environments (${input.runId})`,
    language: ['en'],
    task_categories: ['text-generation'],
    tags: ['code', 'python', 'repost', 'execution-feedback', 'repository-level'],
    size_categories: [sizeCategory(total)],
    configs: [
      { config_name: 'default', data_files: input.splits.map((s) => ({ split: s.name, path: s.path })) },
      ...(classSplits.length ? [{ config_name: 'classes', data_files: classSplits.map((s) => ({ split: s.name, path: s.path })) }] : []),
    ],
    // Split sizes are left to the library and the Hub: they want num_bytes as Arrow in memory,
    // which only they can measure; the card's own table gives the row counts.
    dataset_info: classSplits.length
      ? [
          { config_name: 'default', features: huggingFaceFeatures(EXPORT_COLUMNS) as YamlValue },
          { config_name: 'classes', features: huggingFaceFeatures(CLASS_ENVIRONMENT_COLUMNS as readonly ExportColumn<never>[]) as YamlValue },
        ]
      : { features: huggingFaceFeatures(EXPORT_COLUMNS) as YamlValue },
  };
  return `---\n${toYaml(yaml)}---\n`;
}

/** A split's coverage threshold as the run's settings give it (`{ train, eval }`, or one number in runs frozen before). */
function runThreshold(settings: Record<string, unknown>, split: string): string {
  const t = settings.coverageThreshold;
  const value = t && typeof t === 'object' ? (t as Record<string, unknown>)[split] : t;
  return value === undefined || value === null ? '?' : String(value);
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function table(head: string[], rows: string[][]): string {
  return [`| ${head.map(cell).join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');
}

function statisticsTable(input: DatasetCardInput): string {
  const splits = input.splits.map((s) => s.name);
  const columns = splits.map((s) => input.statistics.splits[s]!);
  return table(
    ['figure', ...splits],
    TABLE_4_ROWS.map((row) => [row.label, ...columns.map((c) => formatFigure(c[row.key], row.kind))]),
  );
}

const percent = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);

/** How solvable the evaluation records are from their prompts, when the solvability stage ran. */
function solvabilitySection(input: DatasetCardInput): string {
  const f = input.solvability;
  if (!f || (f.checked === 0 && f.rejected === 0)) return '';
  const distribution = solveRateBars(f).map(({ rate, records }) => `${percent(rate)}: ${records}`).join(', ') || '–';
  return [
    '## Solvability',
    '',
    'Each evaluation record was checked after the final checks: a model wrote implementations of the function',
    "from the record's prompt alone (the context with the body left out and the docstring, or, for a function",
    'without one, a docstring written from the ground truth, given in `generated_docstring`). When none passed,',
    'each failing assertion was put to a judge; assertions on behaviour the prompt does not determine were removed',
    "and the script run again with the ground truth at the split's coverage (listed in `removed_assertions`), or the",
    'record rejected. `solve_rate` is the share of the implementations that pass the tests as they are.',
    '',
    table(
      ['figure', 'value'],
      [
        ['records checked', String(f.checked)],
        ['mean solve rate', percent(f.meanSolveRate)],
        ['records per solve rate', distribution],
        ['solved by no implementation (before any removal)', `${f.unsolved} (${f.unsolvedInitially})`],
        ['assertions judged', String(f.judged)],
        ['assertions removed as unspecified', `${f.removedAssertions} (in ${f.recordsWithRemovals} record(s))`],
        ['docstrings written from the ground truth', String(f.generatedDocstrings)],
        ['functions rejected at this stage', String(f.rejected)],
      ],
    ),
    '',
  ].join('\n');
}

/** How strong the tests are beyond coverage: the mutation scores' spread, or why there is none. */
function testStrengthSection(t: TestStrength): string {
  if (t.scored === 0) {
    return 'The run did not measure its tests\' mutation scores (`loops.mutation.enabled`); `mutation_score` is null.' +
      (t.stability.stable + t.stability.flaky > 0 ? ` Stability: ${t.stability.stable} stable, ${t.stability.flaky} flaky (kept and labelled).` : '');
  }
  const f = (x: number | null) => (x === null ? '–' : x.toFixed(3));
  const bins = t.histogram.map((b) => [b.from === b.to ? '1.0' : `${b.from.toFixed(1)}–${b.to.toFixed(1)}`, String(b.records)]);
  return [
    `A record's \`mutation_score\` is the share of its target's mutants (small wrong changes: operators, conditions,`,
    'boundaries, constants, removed statements, returned values, argument order; each placed as the new implementation)',
    'its tests reject. Surviving mutants are listed with their diffs in `mutation_survivors`: some may be equivalent',
    'to the target, which no tool can decide; a person can judge them.',
    '',
    table(
      ['figure', 'value'],
      [
        ['records scored', `${t.scored} (${t.unscored} without a score)`],
        ['mean, median', `${f(t.mean)}, ${f(t.median)}`],
        ['25th, 75th percentile', `${f(t.p25)}, ${f(t.p75)}`],
        ['min, max', `${f(t.min)}, ${f(t.max)}`],
        ['every mutant killed', String(t.perfect)],
        ['mutants made, killed, survived, timed out', `${t.mutants.made}, ${t.mutants.killed}, ${t.mutants.survived}, ${t.mutants.timedOut}`],
        ['mutants left out (no allowed test can see them): output, message, equivalent', `${t.mutants.leftOut?.output ?? 0}, ${t.mutants.leftOut?.message ?? 0}, ${t.mutants.leftOut?.equivalent ?? 0}`],
        ['records improved by mutation rounds', `${t.improvedByRounds} (${t.mutationRounds} rounds)`],
        ['stability: stable, flaky (kept), not checked', `${t.stability.stable}, ${t.stability.flaky}, ${t.stability.unchecked}`],
      ],
    ),
    '',
    table(['mutation score', 'records'], bins),
  ].join('\n');
}

function buildSection(input: DatasetCardInput): string {
  const settings = settingRows(input.info.settings).map(([k, v]) => [k, `\`${v}\``]);
  const unpriced = input.info.unpricedModels ?? [];
  // A model without a price makes the cost unknown, never $0.
  const cost = (usd: number, digits: number) => (unpriced.length === 0 ? `$${usd.toFixed(digits)}` : usd > 0 ? `$${usd.toFixed(digits)} + price unknown for ${unpriced.join(', ')}` : `price unknown for ${unpriced.join(', ')}`);
  const sourceKinds = new Map<string, number>();
  for (const s of input.info.sources) {
    const kind = s && typeof s === 'object' && 'kind' in s ? String((s as { kind: unknown }).kind) : 'unknown';
    sourceKinds.set(kind, (sourceKinds.get(kind) ?? 0) + 1);
  }
  const usage = input.summary.llm?.total;
  const per = input.statistics.perAcceptedExample;
  const lines = [
    `Built by repost-factory, run \`${input.runId}\` (exported ${input.exportedAt}), with the RepoST method: for each`,
    'Python function an LLM isolates the function and its local dependencies into one standalone script and writes',
    'equivalence tests; the script runs in a sandbox with the original function as the new implementation, failures',
    'go back to the LLM for debug rounds and missing branches for coverage rounds; final checks (AST equality, an',
    'LLM functionality check, an LLM test check) decide what is kept.',
    '',
    `- sources: ${[...sourceKinds].map(([k, n]) => `${n} ${k}`).join(', ') || 'not recorded'}; ${input.summary.repositories} repositories crawled, ${input.summary.skippedRepos.length} skipped`,
    `- functions: ${input.summary.functions} tried, ${input.summary.accepted} accepted, ${input.summary.rejected} rejected`,
    `- model: \`${input.info.model ?? 'not recorded'}\``,
    usage
      ? `- LLM usage: ${usage.calls} calls (${usage.cachedCalls} from the cache), ${usage.promptTokens + usage.completionTokens} tokens, estimated ${cost(usage.costUsd, 4)}` +
        (per ? `; per accepted example ${per.tokens} tokens, ${cost(per.costUsd, 6)}` : '')
      : '- LLM usage: not recorded',
    '',
    '### Settings',
    '',
    settings.length ? table(['setting', 'value'], settings) : 'Not recorded.',
    '',
    '### Prompt versions',
    '',
    input.promptVersions.length ? table(['step', 'template@version', 'records'], input.promptVersions.map((p) => [p.step, `\`${p.version}\``, String(p.records)])) : 'None recorded.',
  ];
  return lines.join('\n');
}

/** A column's type as the card's field tables say it. */
function columnTypeText(t: ExportColumn<never>['type']): string {
  const nullable = t.nullable ? ' (nullable)' : '';
  return t.kind === 'scalar' ? `${t.scalar}${nullable}` : `list of {${t.fields.join(', ')}}${nullable}`;
}

/** The `classes` configuration: class environments, each a whole class with its test functions. */
function classSection(input: DatasetCardInput): string {
  const splits = input.classSplits ?? [];
  if (!splits.length) return '';
  return `## Class environments (configuration \`classes\`)

Whole classes made into environments the same way: the class and what its methods use in one
script, test functions that build \`<Class>\` and \`<Class>_new_implementation\` from the same
arguments, call the same methods in the same order and compare results, state and exception
types; coverage is measured over all the class's methods. Each row also carries the class's
skeleton, documentation level and metrics. \`load_dataset("path/to/this/folder", "classes")\`.

${table(['split', 'classes', 'file', 'coverage threshold', 'equal ASTs required'], splits.map((s) => [s.name, String(s.rows), `\`${s.path}\``, s.coverageThresholds.join(', ') || 'not recorded', s.astCheckRequired.map((b) => (b ? 'yes' : 'no')).join(', ') || 'not recorded']))}

${table(['field', 'type', 'meaning'], CLASS_ENVIRONMENT_COLUMNS.map((c) => [`\`${c.name}\``, columnTypeText(c.type), c.description]))}

`;
}

export function renderDatasetCard(input: DatasetCardInput): string {
  const splitRows = input.splits.map((s) => [s.name, String(s.rows), String(input.statistics.splits[s.name]?.repositories ?? 0), `\`${s.path}\``]);
  const licenseRows = input.repositories.map((r) => [r.repo, r.license, r.licenseSource ?? 'not recorded', String(r.records)]);
  return `${frontMatter(input)}
# RepoST-style coding environments: run \`${input.runId}\`

Repository-level Python coding tasks with execution feedback, built the way the RepoST paper
(Xie et al., *RepoST: Scalable Repository-Level Coding Environment Construction with Sandbox
Testing*) builds REPOST-TRAIN and REPOST-EVAL. Each example is a function from a real repository
(\`orig_func\`), the repository context it depends on (\`orig_context\`), and a standalone evaluation
script (\`eval_script\`) whose tests compare the function with a candidate implementation.
The fields RepoST publishes keep their names and meaning.

## Splits

${table(['split', 'functions', 'repositories', 'file'], splitRows)}

RepoST builds \`train\` from repositories created in a training window and \`eval\` from repositories
created after a cutoff, for contamination-free evaluation; the thresholds differ (coverage 0.8 for
train, 1.0 and equal ASTs for eval). The thresholds this export's records were held to:

${table(['split', 'branch coverage threshold', 'equal ASTs required'], input.splits.map((s) => [s.name, s.coverageThresholds.join(', ') || `not recorded (run setting: ${runThreshold(input.info.settings, s.name)})`, s.astCheckRequired.map((b) => (b ? 'yes' : 'no')).join(', ') || 'not recorded']))}

## Statistics (RepoST's Table 4)

${statisticsTable(input)}

Tokens are counted with \`${input.statistics.tokenizer}\` (GPT-4o's BPE); lines are physical lines. Test cases
are the \`assert\` statements of the script's test functions. External libraries are the distinct
non-standard-library distributions the scripts import.

## Test strength

${input.testStrength ? testStrengthSection(input.testStrength) : 'Not recorded.'}

${solvabilitySection(input)}
## How it was built

${buildSection(input)}

## Fields

${table(['field', 'type', 'meaning'], EXPORT_COLUMNS.map((c) => [`\`${c.name}\``, columnTypeText(c.type), c.description]))}

## Use

\`\`\`python
from datasets import load_dataset
ds = load_dataset("path/to/this/folder")   # or the Hub repository id
row = ds["${input.splits[0]?.name ?? 'train'}"][0]
\`\`\`

To evaluate a candidate for \`row["func_name"]\`, define it in the script under the name
\`<func_name>_new_implementation\` (for a method, as a method of the same class) and run the script
with Python: the tests pass if and only if the candidate behaves like the original. Install the
distributions listed in \`packages\` first. Run the scripts in a sandbox: they execute code from
the source repositories.

${classSection(input)}## Source repositories and licenses

The examples contain code from these repositories, under their licenses. Where each license was
read: \`github-api\` (GitHub's answer), \`file:<name>\` (the repository's license file, matched
against the SPDX license texts), \`none\` (neither says).

${table(['repository', 'license', 'from', 'records'], licenseRows)}
`;
}
