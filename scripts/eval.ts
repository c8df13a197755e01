/**
 * Evaluate a model on a dataset (ours or RepoST's published format): Pass@k with the unbiased
 * estimator, self-repair rounds, failure kinds, and optionally ranking without ground truth.
 *
 *   tsx scripts/eval.ts --dataset FILE|DIR [options]
 *     FILE: JSON Lines (ours or RepoST's) or an exported Parquet file; DIR: a run's folder (its
 *     dataset.jsonl) or an export's folder (export.ts: its train and eval Parquet splits)
 *     --model M              the model to evaluate (default: llm.models.solve, else OPENAI_MODEL)
 *     --base-url URL         its OpenAI-compatible endpoint (default: OPENAI_BASE_URL)
 *     --n N                  samples per function (default 1)
 *     --temperature T        sampling temperature (default 0)
 *     --k 1,5,10             k values of Pass@k and n@k (those above n are left out)
 *     --repair-rounds R      self-repair rounds with the error message and traceback (default 0)
 *     --docstring MODE       original | none | generated (written by --docstring-model from the ground truth)
 *     --select METHOD        genx | codet | random: rank the samples without ground truth and report
 *                            n@k and the ranked tests' precision Pr@k (all three methods are scored)
 *     --test-samples N       test-writing answers per function for ranking (default 2)
 *     --concurrency N        functions at once (default 8); --sample-window N samples at once per function
 *     --timeout S            limit of one candidate run in seconds (default 60)
 *     --augment              instead: GenX-style test augmentation for building datasets (extra
 *                            equivalence inputs whose expected values come from the ground truth,
 *                            kept only when deterministic); writes dataset.augmented.jsonl
 *     --limit N  --out DIR  --run-id ID  --no-workers  --scripted FIXTURE (offline scripted LLM)
 *
 *   tsx scripts/eval.ts --classes --dataset classes-dataset.jsonl [--ground-truth] [options]
 *     class-level evaluation of class environments, through Temporal like the function evaluation:
 *     the model writes each class from its skeleton and the code it uses (--model, --base-url,
 *     --n, --temperature, --k, --repair-rounds, --timeout, --limit, --run-id, --no-workers,
 *     --scripted as above; answers cached, exchanges recorded, cost counted); scored by the
 *     environment's tests, each test function on its own (per-test pass rate, Pass@k over whole
 *     classes, after each repair round), and by BLEU, ROUGE-L and TSED against the original class,
 *     stratified by documentation level and metric quartiles. --ground-truth answers with each
 *     record's own class (no LLM call). Writes class-eval.jsonl and class-eval-summary.json to
 *     --out (default: the dataset's folder).
 *
 *   tsx scripts/eval.ts --report OUT.html RUN_DIR [RUN_DIR ...]
 *     one report over several runs (e.g. one run per model)
 *
 * Writes eval.jsonl, eval-summary.json and eval-report.html to the run folder.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { RunIdSchema } from '../activities/store/types';
import { renderEvalReport } from '../activities/eval/report';
import { evalPaths } from '../activities/eval/run-files';
import { DOCSTRING_MODES, SELECT_METHODS, type EvalSettings } from '../activities/eval/settings';
import { readEvalSummaryFile } from '../activities/eval/summary-file';
import { CommandFailure, runCommand, UsageError } from './lib/cli';
import { runClassEval } from './lib/class-eval';
import type { ClassEvalResult } from '../activities/eval/class-eval';
import { runFromFlags, RUN_FLAG_OPTIONS } from './lib/eval-cli';

const intFlag = z.coerce.number().int().positive();

const FlagsSchema = z.object({
  dataset: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  'base-url': z.string().url().optional(),
  n: intFlag.optional(),
  temperature: z.coerce.number().min(0).max(2).optional(),
  k: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'a comma-separated list of positive integers')
    .transform((s) => s.split(',').map(Number))
    .optional(),
  'repair-rounds': z.coerce.number().int().nonnegative().optional(),
  docstring: z.enum(DOCSTRING_MODES).optional(),
  'docstring-model': z.string().min(1).optional(),
  select: z.enum(SELECT_METHODS).optional(),
  'test-samples': intFlag.optional(),
  concurrency: intFlag.optional(),
  'sample-window': intFlag.optional(),
  timeout: intFlag.optional(),
  augment: z.boolean().default(false),
  limit: intFlag.optional(),
  out: z.string().min(1).optional(),
  'run-id': RunIdSchema.optional(),
  'no-workers': z.boolean().default(false),
  scripted: z.string().min(1).optional(),
  report: z.string().min(1).optional(),
  classes: z.boolean().default(false),
  'ground-truth': z.boolean().default(false),
});

const OPTIONS = {
  ...RUN_FLAG_OPTIONS,
  k: { type: 'string' },
  docstring: { type: 'string' },
  'docstring-model': { type: 'string' },
  select: { type: 'string' },
  'test-samples': { type: 'string' },
  augment: { type: 'boolean' },
  report: { type: 'string' },
  classes: { type: 'boolean' },
  'ground-truth': { type: 'boolean' },
} as const;

function writeCombinedReport(out: string, runDirs: string[]): number {
  if (runDirs.length === 0) throw new UsageError('--report needs at least one run folder (holding eval-summary.json)');
  // A run folder may come from anywhere: each summary is validated whole before it reaches the page.
  const summaries = runDirs.map((d) => {
    const file = evalPaths(d).summary;
    if (!fs.existsSync(file)) throw new CommandFailure(`${d} holds no eval-summary.json`);
    try {
      return readEvalSummaryFile(file);
    } catch (err) {
      // The refusal names the file and the field; it is the input's fault, not a bug (no stack).
      throw new CommandFailure((err as Error).message);
    }
  });
  fs.writeFileSync(out, renderEvalReport(summaries, { title: `Evaluation report: ${summaries.length} run(s)`, generatedAt: new Date().toISOString() }));
  console.log(`report over ${summaries.length} run(s) written to ${path.resolve(out)}`);
  return 0;
}

/** The first samples' failures (at most `max`), each with its first failed test: the failed assertion (line, source, values) or what it raised. */
function classFailureLines(results: readonly ClassEvalResult[], max = 5): string[] {
  const failed = results.flatMap((r) => r.samples.filter((s) => !s.passed).map((s) => ({ r, s })));
  if (!failed.length) return [];
  const lines = failed.slice(0, max).map(({ r, s }) => {
    const test = s.tests.find((t) => !t.passed && t.assertion) ?? s.tests.find((t) => !t.passed);
    const why = s.error ?? (test ? `${test.test}: ${test.assertion ?? test.failure ?? 'failed'}` : 'no test');
    // The message holds values the answer made: no control character reaches the terminal.
    return `  ${r.class_name} (sample ${s.sample}, ${s.passedTests}/${s.tests.length} test(s) passed): ${why}`.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  });
  return [`failed samples: ${failed.length}${failed.length > max ? ` (the first ${max})` : ''}`, ...lines];
}

async function evalClasses(flags: z.infer<typeof FlagsSchema>, dataset: string): Promise<number> {
  const { summary, outDir, results } = await runClassEval({
    dataset,
    out: flags.out ?? path.dirname(path.resolve(dataset)),
    groundTruth: flags['ground-truth'],
    model: flags.model,
    baseUrl: flags['base-url'],
    scripted: flags.scripted,
    n: flags.n ?? 1,
    temperature: flags.temperature ?? 0,
    ks: flags.k ?? [1, 5, 10],
    repairRounds: flags['repair-rounds'] ?? 0,
    limit: flags.limit,
    timeoutSec: flags.timeout ?? 60,
    runId: flags['run-id'],
    noWorkers: flags['no-workers'],
  });
  const o = summary.overall;
  const pct = (x: number | null) => (x === null ? '-' : x.toFixed(3));
  console.log(`${summary.classes} class(es), ${summary.samplesPerClass} sample(s) each: ${Object.entries(o.passAtK).map(([k, v]) => `${k} ${pct(v)}`).join(', ')}; per-test pass rate ${pct(o.testPassRate)}; BLEU ${pct(o.bleu)}, ROUGE-L ${pct(o.rougeL)}, TSED ${pct(o.tsed)}`);
  if (summary.passAtKByRound.length > 1) console.log(`pass@1 per self-repair round: ${summary.passAtKByRound.map((r, i) => `${i === 0 ? 'initial' : `round ${i}`} ${pct(r['pass@1'] ?? null)}`).join(', ')}`);
  for (const line of classFailureLines(results)) console.log(line);
  const u = summary.usage;
  console.log(`LLM: ${u.calls} call(s), ${u.cachedCalls} from the cache, ${u.promptTokens} prompt + ${u.completionTokens} completion tokens, estimated $${u.costUsd.toFixed(4)}`);
  console.log(`written to ${outDir}/: class-eval.jsonl, class-eval-summary.json`);
  return 0;
}

async function main(values: unknown, positionals: string[]): Promise<number> {
  const flags = FlagsSchema.parse(values);
  if (flags.report) return writeCombinedReport(flags.report, positionals);
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
  if (!flags.dataset) throw new UsageError('give --dataset FILE');
  if (flags['ground-truth'] && !flags.classes) throw new UsageError('--ground-truth applies to --classes');
  if (flags.classes) return evalClasses(flags, flags.dataset);
  const settings: Partial<EvalSettings> = {
    task: flags.augment ? 'augment' : 'eval',
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.n ? { n: flags.n } : {}),
    ...(flags.temperature !== undefined ? { temperature: flags.temperature } : {}),
    ...(flags.k ? { ks: flags.k } : {}),
    ...(flags['repair-rounds'] !== undefined ? { repairRounds: flags['repair-rounds'] } : {}),
    ...(flags.docstring ? { docstring: flags.docstring } : {}),
    ...(flags['docstring-model'] ? { docstringModel: flags['docstring-model'] } : {}),
    ...(flags.select ? { select: flags.select } : {}),
    ...(flags['test-samples'] ? { testSamples: flags['test-samples'] } : {}),
    ...(flags.concurrency ? { functionWindow: flags.concurrency } : {}),
    ...(flags['sample-window'] ? { sampleWindow: flags['sample-window'] } : {}),
    ...(flags.timeout ? { timeoutSec: flags.timeout } : {}),
  };
  return runFromFlags(
    { dataset: flags.dataset, baseUrl: flags['base-url'], scripted: flags.scripted, limit: flags.limit, out: flags.out, runId: flags['run-id'], noWorkers: flags['no-workers'] },
    settings,
  );
}

runCommand({ file: __filename, options: OPTIONS, positionals: { max: Infinity }, run: ({ values, positionals }) => main(values, positionals) });
