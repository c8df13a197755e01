/**
 * The sandbox from the command line.
 *
 *   tsx scripts/sandbox.ts run <script.py> [--file name=path ...] [--coverage <function>] [--install]
 *                              [--timeout S] [--strict] [--json]
 *   tsx scripts/sandbox.ts run <eval_script.py> --candidate <answer.py> --target <name|Class.method>
 *                              [--install] [--timeout S] [--json]
 *       checks an answer as an evaluation does: the answer runs in a process of its own and the
 *       script's <name>_new_implementation calls it there (exit 0 when it passes)
 *   tsx scripts/sandbox.ts batch <records.jsonl|records.json> --ground-truth [--concurrency N] [--strict]
 *                              [--coverage-of original|new-implementation] [--limit N] [--no-install]
 *                              [--as-of DATE] [--mutation [--mutants N] [--mutation-seed S] [--mutant-timeout S]]
 *                              [--stability N] [--isolated] [--json]
 *
 * batch --isolated runs each ground truth as an evaluation runs a candidate (in a process of its own).
 * batch resolves each record's packages as of its `commit_date` (plus sandbox.packages.asOfGraceSec);
 * --as-of gives the date for records that carry none (RepoST's published records: a commit id, no
 * date). Without either, the newest releases.
 *   tsx scripts/sandbox.ts image <dataset.jsonl> --tag NAME
 *   tsx scripts/sandbox.ts cleanup
 */
import * as fs from 'node:fs';
import { z } from 'zod';
import { isolatedPlacement, SandboxExecutor, type RunRequest, type SandboxResult } from '../activities/sandbox';
import { isCodeDate } from '../activities/sandbox/as-of';
import { buildDatasetImage } from '../activities/sandbox/dataset-image';
import { DEFAULT_MUTATION_SETTINGS, leftOutComparison, mutationDistribution, summarizeMutation, testMutants, type MutationSummary, type SurvivingMutant } from '../activities/sandbox/mutation';
import { groundTruthRequest, mapConcurrent, parseRecords, parseRecordsJsonl, runGroundTruth, type GroundTruthOutcome } from '../activities/sandbox/repost-records';
import { checkStability, type StabilityResult } from '../activities/sandbox/stability';
import { ensureSandboxImage } from '../sandbox-image/build';
import { dataPaths, loadConfig } from '../temporal.config';
import { CommandFailure, runCommand, UsageError } from './lib/cli';

/** Every subcommand's flags (each takes the ones its usage line names). */
const OPTIONS = {
  file: { type: 'string', multiple: true },
  coverage: { type: 'string' },
  install: { type: 'boolean' },
  timeout: { type: 'string' },
  strict: { type: 'boolean' },
  json: { type: 'boolean' },
  'ground-truth': { type: 'boolean' },
  concurrency: { type: 'string' },
  'coverage-of': { type: 'string' },
  limit: { type: 'string' },
  'no-install': { type: 'boolean' },
  mutation: { type: 'boolean' },
  mutants: { type: 'string' },
  'mutation-seed': { type: 'string' },
  'mutant-timeout': { type: 'string' },
  stability: { type: 'string' },
  'as-of': { type: 'string' },
  tag: { type: 'string' },
  candidate: { type: 'string' },
  target: { type: 'string' },
  isolated: { type: 'boolean' },
} as const;

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K] extends { multiple: true } ? string[] : (typeof OPTIONS)[K] extends { type: 'boolean' } ? boolean : string };

const positive = z.coerce.number().int().positive();

async function makeExecutor(strict: boolean): Promise<SandboxExecutor> {
  const config = loadConfig();
  const image = config.sandbox.image ?? (await ensureSandboxImage({ log: (l) => process.stderr.write(`${l}\n`) })).tag;
  const executor = new SandboxExecutor({ ...config.sandbox, strict }, { image, packagesDir: dataPaths(config).packages });
  await executor.cleanupLeftovers();
  return executor;
}

function printResult(r: SandboxResult): void {
  console.log(`status: ${r.status} (exit ${r.exitCode ?? '-'}, ${r.durationMs} ms${r.truncated ? ', output truncated' : ''})`);
  if (r.stdout) console.log(`--- stdout\n${r.stdout.trimEnd()}`);
  if (r.stderr) console.log(`--- stderr\n${r.stderr.trimEnd()}`);
  if (r.exception) console.log(`--- exception: ${r.exception.type}: ${r.exception.message}`);
  if (r.coverage) console.log(`--- coverage: ${r.coverage.summary}`);
  if (r.packages.length) console.log(`--- packages: ${r.packages.map((p) => `${p.name}==${p.version}`).join(' ')}`);
  for (const n of r.notes) console.log(`--- note: ${n}`);
}

async function cmdRun(values: Values, positionals: string[]): Promise<number> {
  if (positionals.length !== 1) throw new UsageError('run takes one script: run <script.py>');
  const files: Record<string, string> = {};
  for (const spec of values.file ?? []) {
    const m = /^([^=]+)=(.+)$/.exec(spec);
    if (!m) throw new UsageError(`--file expects name=path, got ${spec}`);
    files[m[1]!] = fs.readFileSync(m[2]!, 'utf8');
  }
  if ((values.candidate === undefined) !== (values.target === undefined)) throw new UsageError('--candidate and --target go together');
  let script = fs.readFileSync(positionals[0]!, 'utf8');
  let candidate: RunRequest['candidate'];
  if (values.candidate !== undefined) {
    if (values.coverage || Object.keys(files).length) throw new UsageError('--candidate takes neither --coverage nor --file');
    try {
      const placed = isolatedPlacement(script, fs.readFileSync(values.candidate, 'utf8'), values.target!);
      script = placed.script;
      candidate = { target: placed.target, kind: placed.kind, module: placed.module };
    } catch (err) {
      throw new UsageError(`cannot place the answer: ${(err as Error).message}`);
    }
  }
  const executor = await makeExecutor(values.strict ?? false);
  try {
    const result = await executor.run({
      script,
      candidate,
      files,
      coverage: values.coverage ? { functionName: values.coverage } : undefined,
      install: values.install ?? false,
      timeoutSec: values.timeout ? positive.parse(values.timeout) : undefined,
    });
    if (values.json) console.log(JSON.stringify(result, null, 2));
    else printResult(result);
    if (!values.json && result.candidate) console.log(`--- the answer failed the run (${result.candidate.kind}): ${result.candidate.detail}`);
    return result.status === 'passed' ? 0 : 1;
  } finally {
    await executor.close();
  }
}

function summarize(outcomes: GroundTruthOutcome[]) {
  const byStatus: Record<string, number> = {};
  for (const o of outcomes) byStatus[o.result.status] = (byStatus[o.result.status] ?? 0) + 1;
  return {
    records: outcomes.length,
    passed: outcomes.filter((o) => o.result.status === 'passed').length,
    byStatus,
    coverageMatches: outcomes.filter((o) => o.coverageMatches === true).length,
    coverageDiffers: outcomes.filter((o) => o.coverageMatches === false).length,
    withPackages: outcomes.filter((o) => o.result.packages.length > 0).length,
    /** Records whose packages were all resolved as of their code's date, and records with a package at its newest release. */
    packagesAsOf: outcomes.filter((o) => o.result.packages.length > 0 && o.result.packages.every((p) => p.asOf)).length,
    packagesNewest: outcomes.filter((o) => o.result.packages.some((p) => !p.asOf)).length,
    /** Records that did not pass for a reason of their own (outcomes[].recordIssue says which). */
    recordIssues: outcomes.filter((o) => o.recordIssue !== null).length,
  };
}

async function cmdBatch(values: Values, positionals: string[]): Promise<number> {
  if (positionals.length !== 1 || !values['ground-truth']) throw new UsageError('batch takes one records file and runs its records with their ground truth: batch <records.jsonl|records.json> --ground-truth');
  const coverageOf = z.enum(['original', 'new-implementation']).parse(values['coverage-of'] ?? 'original');
  // The mutants no allowed test can see run too, tagged, so the scores before and after leaving them out print side by side.
  const mutationSettings = {
    ...DEFAULT_MUTATION_SETTINGS,
    keepLeftOut: true,
    ...(values.mutants ? { cap: positive.parse(values.mutants) } : {}),
    ...(values['mutation-seed'] ? { seed: z.coerce.number().int().min(0).parse(values['mutation-seed']) } : {}),
    ...(values['mutant-timeout'] ? { mutantTimeoutSec: z.coerce.number().positive().parse(values['mutant-timeout']) } : {}),
  };
  const stabilityRuns = values.stability ? z.coerce.number().int().min(2).parse(values.stability) : null;
  if (values.isolated && (values.mutation || stabilityRuns)) throw new UsageError('--isolated runs the ground truth as a candidate: it takes neither --mutation nor --stability');
  let records: ReturnType<typeof parseRecordsJsonl>;
  try {
    records = parseRecords(fs.readFileSync(positionals[0]!, 'utf8'));
  } catch (err) {
    // The file and the line of a record that is not valid JSON or not a record.
    throw new CommandFailure(`${positionals[0]}: ${(err as Error).message}`);
  }
  if (values.limit) records = records.slice(0, positive.parse(values.limit));
  const asOf = values['as-of'];
  if (asOf !== undefined && !isCodeDate(asOf)) throw new UsageError(`--as-of expects a date (YYYY-MM-DD or an ISO 8601 time), got ${JSON.stringify(asOf.slice(0, 40))}`);
  const executor = await makeExecutor(values.strict ?? false);
  const concurrency = values.concurrency ? positive.parse(values.concurrency) : executor.config.pool.size;
  const started = Date.now();
  try {
    await executor.warm();
    const install = !values['no-install'];
    const outcomes = await mapConcurrent(records, concurrency, async (record) => {
      const o: GroundTruthOutcome & { mutation?: { summary: MutationSummary; survivors: SurvivingMutant[] }; stability?: StabilityResult } = await runGroundTruth(
        executor,
        record,
        { coverageOf, install, asOf, isolated: values.isolated ?? false },
      );
      if (values.mutation) {
        // A script that fails with its ground truth says nothing about mutants: not run.
        o.mutation =
          o.result.status === 'passed'
            ? await testMutants(
                executor,
                // The packages the ground-truth run installed, without reading the imports again.
                { script: record.eval_script, originalFunction: record.orig_func, functionName: record.func_name, install: false, requirements: o.result.requirements },
                mutationSettings,
              )
            : summarizeMutation(o.result);
      }
      if (stabilityRuns) o.stability = await checkStability(executor, groundTruthRequest(record, { coverageOf, install, asOf }), stabilityRuns);
      if (!values.json) {
        const cov = o.coverageRate === null ? 'no coverage' : `coverage ${o.coverageRate.toFixed(2)} (record ${o.recordCoverageRate ?? '-'})`;
        const why =
          o.result.status === 'passed'
            ? ''
            : o.recordIssue
              ? ` record issue: ${o.recordIssue}`
              : ` ${o.result.exception ? `${o.result.exception.type}: ${o.result.exception.message.split('\n')[0]}` : (o.result.notes.at(-1) ?? '')}`;
        const pkgs = o.result.packages.length ? ` [${o.result.packages.map((p) => `${p.name}==${p.version}`).join(' ')}]` : '';
        console.log(`${o.idx.padStart(5)} ${o.funcName.padEnd(40)} ${o.result.status.padEnd(8)} ${String(o.result.durationMs).padStart(6)} ms  ${cov}${pkgs}${why}`);
        if (o.mutation) console.log(`      ${mutationLine(o.mutation.summary)}`);
        if (o.stability) console.log(`      ${o.stability.verdict}${o.stability.reason ? `: ${o.stability.reason}` : ''}`);
      }
      // The JSON keeps the summary and the survivors' diffs, not the mutation run's output.
      if (o.mutation) o.mutation = { summary: o.mutation.summary, survivors: o.mutation.survivors };
      return o;
    });
    const summary = {
      ...summarize(outcomes),
      ...(values.mutation ? { mutation: mutationDistribution(outcomes.map((o) => o.mutation!.summary)) } : {}),
      ...(values.mutation ? { mutationLeftOut: leftOutComparison(outcomes.map((o) => o.mutation!.summary)) } : {}),
      ...(stabilityRuns ? { stability: stabilityCounts(outcomes.map((o) => o.stability!)) } : {}),
      wallMs: Date.now() - started,
      concurrency,
      mode: executor.mode,
    };
    if (values.json) console.log(JSON.stringify({ summary, outcomes }, null, 2));
    else {
      const { mutationLeftOut, ...rest } = summary;
      if (mutationLeftOut) console.log(`\nmutation scores with the mutants no allowed test can see (before) and without them (after):\n${mutationLeftOut.text}`);
      console.log(`\n${JSON.stringify(rest)}`);
    }
    return summary.passed === summary.records ? 0 : 1;
  } finally {
    await executor.close();
  }
}

function mutationLine(m: MutationSummary): string {
  if (m.status === 'ground_truth_failed') return 'mutants: not run (the script fails with its ground truth)';
  if (m.status === 'no_mutants') return `mutants: none${m.notes.length ? ` (${m.notes.join('; ')})` : ''}`;
  const notRun = m.notRun ? `, ${m.notRun} not run` : '';
  const left = Object.entries(m.leftOut).filter(([, n]) => n > 0);
  const before = left.length && m.scoreWithLeftOut !== null ? ` (${m.scoreWithLeftOut.toFixed(2)} with the left-out ones; left out ${left.map(([r, n]) => `${n} ${r}`).join(', ')})` : '';
  return `mutants ${m.made}: killed ${m.killed} (${m.timedOut} timed out), survived ${m.survived}${notRun}; score ${m.score!.toFixed(2)}${before}`;
}

function stabilityCounts(results: StabilityResult[]) {
  return {
    stable: results.filter((r) => r.verdict === 'stable').length,
    flaky: results.filter((r) => r.verdict === 'flaky').length,
    inconclusive: results.filter((r) => r.verdict === 'inconclusive').length,
  };
}

async function cmdImage(values: Values, positionals: string[]): Promise<number> {
  if (positionals.length !== 1 || !values.tag) throw new UsageError('image takes one dataset and a tag: image <dataset.jsonl> --tag NAME');
  const executor = await makeExecutor(false);
  try {
    const records = parseRecordsJsonl(fs.readFileSync(positionals[0]!, 'utf8'));
    const built = await buildDatasetImage(executor, records, { tag: values.tag, log: (l) => console.error(l) });
    console.log(`${built.tag}: ${built.packages.length} packages (${built.packages.map((p) => `${p.name}==${p.version}`).join(' ') || 'none'})`);
    if (built.unresolved.length) console.log(`records whose imports could not be installed: ${built.unresolved.join(', ')}`);
    return 0;
  } finally {
    await executor.close();
  }
}

async function cmdCleanup(): Promise<number> {
  const executor = await makeExecutor(true);
  const removed = await executor.cleanupLeftovers();
  console.log(`removed ${removed} leftover sandbox containers`);
  await executor.close();
  return 0;
}

async function main(values: Values, positionals: string[]): Promise<number> {
  const [command, ...rest] = positionals;
  switch (command) {
    case 'run':
      return cmdRun(values, rest);
    case 'batch':
      return cmdBatch(values, rest);
    case 'image':
      return cmdImage(values, rest);
    case 'cleanup':
      if (rest.length) throw new UsageError('cleanup takes no argument');
      return cmdCleanup();
    default:
      throw new UsageError(command ? `unknown command ${command}: run, batch, image or cleanup` : 'give a command: run, batch, image or cleanup');
  }
}

runCommand({ file: __filename, options: OPTIONS, positionals: { max: 2 }, run: ({ values, positionals }) => main(values, positionals) });
