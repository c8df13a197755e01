/**
 * Mutation benchmark, measured side by side in one run (`npm run bench:mutation`), on the RepoST
 * fixture records with their ground truth (packages installed beforehand, so no side pays for
 * installs):
 *
 * 1. Per function, one at a time (a pool of one container): the function's own ground-truth run
 *    (what a crawl already does: its imports read, its packages installed, its script run with
 *    coverage) and then its mutation run at the cap with the packages that run installed (mutants
 *    made, the ground truth once more and every mutant, in one container run), each
 *    timed, alternating, so a loaded machine slows both alike. Reports the mutation run's wall
 *    time against the ground-truth run's, per function (median, quartiles, worst) and in total.
 *    Aim: under 2x.
 * 2. Throughput on the machine (a pool of one container per core): every function's mutation run,
 *    `concurrency` at a time: mutants per second, and per core; beside it, the ground-truth runs
 *    the same way, which is what a mutant costs when each runs as a run of its own. Aim: at least
 *    10 mutants per second per core.
 *
 *   tsx scripts/bench/mutation.ts [--records path.jsonl] [--cap N] [--concurrency N] [--skip-throughput] [--json]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Docker from 'dockerode';
import { z } from 'zod';
import { SandboxExecutor, type SandboxExecutorConfig } from '../../activities/sandbox';
import { testMutants, type MutationOutcome } from '../../activities/sandbox/mutation';
import { groundTruthRequest, mapConcurrent, parseRecords, runGroundTruth, type RepostRecord } from '../../activities/sandbox/repost-records';
import { ensureSandboxImage } from '../../sandbox-image/build';
import { dataPaths, loadConfig } from '../../temporal.config';
import { quantile, round, timed } from '../lib/bench-figures';
import { runCommand } from '../lib/cli';



/** As a crawl would run it after the ground truth: with the packages that run installed. */
function mutationInput(record: RepostRecord, requirements: string[]) {
  return { script: record.eval_script, originalFunction: record.orig_func, functionName: record.func_name, install: false, requirements };
}


const OPTIONS = {
  records: { type: 'string', default: path.resolve(__dirname, '../../test/fixtures/repost-execeval-sample.jsonl') },
  cap: { type: 'string', default: '30' },
  concurrency: { type: 'string' },
  'skip-throughput': { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

async function main(values: { records?: string; cap?: string; concurrency?: string; 'skip-throughput'?: boolean; json?: boolean }): Promise<void> {
  const cap = z.coerce.number().int().positive().parse(values.cap);
  const cores = os.cpus().length;
  const concurrency = values.concurrency ? z.coerce.number().int().positive().parse(values.concurrency) : cores;
  const config = loadConfig();
  const docker = new Docker();
  const image = config.sandbox.image ?? (await ensureSandboxImage({ docker })).tag;
  const packagesDir = dataPaths(config).packages;
  const base: SandboxExecutorConfig = { ...config.sandbox, workerId: `bench-mutation-${process.pid}` };
  const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
  const records = parseRecords(fs.readFileSync(values.records!, 'utf8'));
  const report: Record<string, unknown> = { image, machine: { cpus: cores, loadAverageAtStart: os.loadavg().map((l) => round(l)) }, records: records.length, cap };
  log(`${records.length} records, cap ${cap} mutants per function; ${cores} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} (the machine is shared: times vary with its load)`);

  // Packages first, so neither side pays for an install.
  const warmup = new SandboxExecutor({ ...base, pool: { ...base.pool, size: concurrency } }, { docker, image, packagesDir });
  const installed = new Map((await mapConcurrent(records, concurrency, (r) => runGroundTruth(warmup, r))).map((o) => [o.idx, o.result.requirements]));
  await warmup.close();

  // 1. Per function: its ground-truth run, then its mutation run, one container, one at a time.
  const one = new SandboxExecutor({ ...base, pool: { ...base.pool, size: 1, recycleAfterRuns: 1000 } }, { docker, image, packagesDir });
  await one.warm();
  const rows: { idx: string; func: string; groundTruthMs: number; mutationMs: number; ratio: number; mutants: number; timedOut: number; status: string }[] = [];
  const outcomes: MutationOutcome[] = [];
  try {
    for (const record of records) {
      const gt = await timed(() => one.run(groundTruthRequest(record)));
      const mutation = await timed(() => testMutants(one, mutationInput(record, gt.value.requirements), { cap }));
      outcomes.push(mutation.value);
      const s = mutation.value.summary;
      rows.push({
        idx: record.idx,
        func: record.func_name,
        groundTruthMs: Math.round(gt.ms),
        mutationMs: Math.round(mutation.ms),
        ratio: round(mutation.ms / gt.ms),
        mutants: s.made - s.notRun,
        timedOut: s.timedOut,
        status: `${gt.value.status}/${s.status}`,
      });
    }
  } finally {
    await one.close();
  }
  const ratios = rows.map((r) => r.ratio);
  const gtTotal = rows.reduce((n, r) => n + r.groundTruthMs, 0);
  const mutationTotal = rows.reduce((n, r) => n + r.mutationMs, 0);
  const mutantsTotal = rows.reduce((n, r) => n + r.mutants, 0);
  const withoutTimeouts = rows.filter((r) => r.timedOut === 0);
  const perFunction = {
    functions: rows.length,
    mutants: mutantsTotal,
    groundTruthMs: { median: quantile(rows.map((r) => r.groundTruthMs), 0.5), total: gtTotal },
    mutationMs: { median: quantile(rows.map((r) => r.mutationMs), 0.5), total: mutationTotal },
    ratio: { p25: quantile(ratios, 0.25), median: quantile(ratios, 0.5), p75: quantile(ratios, 0.75), max: Math.max(...ratios), total: round(mutationTotal / gtTotal) },
    ratioWithoutTimeouts: { functions: withoutTimeouts.length, median: quantile(withoutTimeouts.map((r) => r.ratio), 0.5), max: Math.max(...withoutTimeouts.map((r) => r.ratio)) },
    functionsUnder2x: rows.filter((r) => r.ratio < 2).length,
    mutantsPerSecondOneLane: round(mutantsTotal / (mutationTotal / 1000), 1),
    rows,
  };
  report.perFunction = perFunction;
  log('\nper function, one at a time: its ground-truth run, then its mutation run (mutants made + the ground truth + every mutant)');
  for (const r of rows) {
    log(`  ${r.idx.padStart(5)} ${r.func.slice(0, 38).padEnd(38)} ground truth ${String(r.groundTruthMs).padStart(5)} ms  mutation ${String(r.mutationMs).padStart(6)} ms (${String(r.mutants).padStart(2)} mutants${r.timedOut ? `, ${r.timedOut} timed out` : ''})  ${r.ratio.toFixed(2)}x`);
  }
  log(`  mutation run / ground-truth run: median ${perFunction.ratio.median}x (quartiles ${perFunction.ratio.p25}x-${perFunction.ratio.p75}x, worst ${perFunction.ratio.max}x), in total ${perFunction.ratio.total}x; ${perFunction.functionsUnder2x}/${rows.length} functions under 2x (aim: under 2x)`);
  log(`  without the ${rows.length - withoutTimeouts.length} functions that had a mutant time out: median ${perFunction.ratioWithoutTimeouts.median}x, worst ${perFunction.ratioWithoutTimeouts.max}x`);
  log(`  one lane: ${mutantsTotal} mutants in ${(mutationTotal / 1000).toFixed(1)} s = ${perFunction.mutantsPerSecondOneLane} mutants/s`);

  // 2. Throughput: every function's mutation run, `concurrency` at a time; the ground-truth runs the same way.
  if (!values['skip-throughput']) {
    const pool = new SandboxExecutor({ ...base, pool: { ...base.pool, size: concurrency, recycleAfterRuns: 1000 } }, { docker, image, packagesDir });
    await pool.warm();
    try {
      const mutation = await timed(() => mapConcurrent(records, concurrency, (r) => testMutants(pool, mutationInput(r, installed.get(r.idx) ?? []), { cap })));
      const ran = mutation.value.reduce((n, o) => n + o.summary.made - o.summary.notRun, 0);
      const gt = await timed(() => mapConcurrent(records, concurrency, (r) => pool.run(groundTruthRequest(r))));
      const mutantsPerSecond = ran / (mutation.ms / 1000);
      const runsPerSecond = records.length / (gt.ms / 1000);
      report.throughput = {
        concurrency,
        mutants: ran,
        wallMs: Math.round(mutation.ms),
        mutantsPerSecond: round(mutantsPerSecond, 1),
        mutantsPerSecondPerCore: round(mutantsPerSecond / cores, 1),
        groundTruthRunsPerSecond: round(runsPerSecond, 1),
        speedupOverARunPerMutant: round(mutantsPerSecond / runsPerSecond, 1),
      };
      log(`\nthroughput, ${concurrency} at a time on ${cores} cores: ${ran} mutants in ${(mutation.ms / 1000).toFixed(1)} s = ${mutantsPerSecond.toFixed(1)} mutants/s, ${(mutantsPerSecond / cores).toFixed(1)} per core (aim: at least 10 per core)`);
      log(`  the same records' ground-truth runs: ${runsPerSecond.toFixed(1)} runs/s: a mutant run as a run of its own would give that; the warm forks give ${(mutantsPerSecond / runsPerSecond).toFixed(1)}x`);
    } finally {
      await pool.close();
    }
  }
  report.loadAverageAtEnd = os.loadavg().map((l) => round(l));
  log(`\nload average at the end ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  if (values.json) console.log(JSON.stringify(report, null, 2));
}

runCommand({ file: __filename, options: OPTIONS, run: ({ values }) => main(values) });
