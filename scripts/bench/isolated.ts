/**
 * What the isolated runner costs per evaluated sample (`npm run bench -- isolated`), side by side
 * in one run on the RepoST fixture records with their ground truth as the sample: the same
 * record run the way evaluations ran samples before (the answer placed in the script as
 * `<name>_new_implementation`, one process) and the isolated way (the answer in a process of its
 * own, the script's stub calling it), alternating record by record in one warm container, so a
 * loaded machine slows both alike. Packages are installed beforehand, so neither side pays for an
 * install. Prints each record's two wall times and their ratio, the median and the total ratio.
 * Aim: at most 1.3x per evaluated sample.
 *
 *   tsx scripts/bench/isolated.ts [--records path.jsonl] [--repeat N] [--json]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Docker from 'dockerode';
import { z } from 'zod';
import { SandboxExecutor, withNewImplementation, type SandboxExecutorConfig } from '../../activities/sandbox';
import { groundTruthRequest, mapConcurrent, parseRecords, runGroundTruth } from '../../activities/sandbox/repost-records';
import { ensureSandboxImage } from '../../sandbox-image/build';
import { dataPaths, loadConfig } from '../../temporal.config';
import { quantile, round, timed } from '../lib/bench-figures';
import { runCommand } from '../lib/cli';




const OPTIONS = {
  records: { type: 'string', default: path.resolve(__dirname, '../../test/fixtures/repost-execeval-sample.jsonl') },
  repeat: { type: 'string', default: '2' },
  json: { type: 'boolean' },
} as const;

async function main(values: { records?: string; repeat?: string; json?: boolean }): Promise<void> {
  const repeat = z.coerce.number().int().positive().parse(values.repeat);
  const config = loadConfig();
  const docker = new Docker();
  const image = config.sandbox.image ?? (await ensureSandboxImage({ docker })).tag;
  const packagesDir = dataPaths(config).packages;
  const base: SandboxExecutorConfig = { ...config.sandbox, workerId: `bench-isolated-${process.pid}` };
  const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
  const records = parseRecords(fs.readFileSync(values.records!, 'utf8'));
  log(`${records.length} records, each run ${repeat} time(s) each way, alternating; ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);

  // Packages first, so neither side pays for an install.
  const warmup = new SandboxExecutor({ ...base, pool: { ...base.pool, size: 2 } }, { docker, image, packagesDir });
  const installed = new Map((await mapConcurrent(records, 2, (r) => runGroundTruth(warmup, r))).map((o) => [o.idx, o.result.requirements]));
  await warmup.close();

  const one = new SandboxExecutor({ ...base, pool: { ...base.pool, size: 1, recycleAfterRuns: 10_000 } }, { docker, image, packagesDir });
  await one.warm();
  const rows: { idx: string; func: string; placedMs: number; isolatedMs: number; ratio: number; placed: string; isolated: string }[] = [];
  try {
    for (const record of records) {
      const requirements = installed.get(record.idx) ?? [];
      // The sample placed in the script, one process (no coverage: an evaluation measures none).
      const placedRequest = { script: withNewImplementation(record.eval_script, record.orig_func, record.func_name), install: false, requirements };
      const isolatedRequest = { ...groundTruthRequest(record, { isolated: true, install: false }), requirements };
      let placedMs = 0;
      let isolatedMs = 0;
      let placed = '';
      let isolated = '';
      for (let i = 0; i < repeat; i++) {
        const a = await timed(() => one.run(placedRequest));
        const b = await timed(() => one.run(isolatedRequest));
        placedMs += a.ms;
        isolatedMs += b.ms;
        placed = a.value.status;
        isolated = b.value.status;
      }
      rows.push({ idx: record.idx, func: record.func_name, placedMs: Math.round(placedMs / repeat), isolatedMs: Math.round(isolatedMs / repeat), ratio: round(isolatedMs / placedMs), placed, isolated });
    }
  } finally {
    await one.close();
  }
  const ratios = rows.map((r) => r.ratio);
  const placedTotal = rows.reduce((n, r) => n + r.placedMs, 0);
  const isolatedTotal = rows.reduce((n, r) => n + r.isolatedMs, 0);
  const summary = {
    records: rows.length,
    bothPassed: rows.filter((r) => r.placed === 'passed' && r.isolated === 'passed').length,
    placedMs: { median: quantile(rows.map((r) => r.placedMs), 0.5), total: placedTotal },
    isolatedMs: { median: quantile(rows.map((r) => r.isolatedMs), 0.5), total: isolatedTotal },
    ratio: { p25: quantile(ratios, 0.25), median: quantile(ratios, 0.5), p75: quantile(ratios, 0.75), max: Math.max(...ratios), total: round(isolatedTotal / placedTotal) },
    recordsAtMost1_3x: rows.filter((r) => r.ratio <= 1.3).length,
  };
  if (values.json) {
    console.log(JSON.stringify({ image, summary, rows }, null, 2));
    return;
  }
  log('\nper record: the sample placed in the script (one process) | the sample isolated (its own process) | ratio');
  for (const r of rows) log(`  ${r.idx.padStart(5)} ${r.func.slice(0, 40).padEnd(40)} ${String(r.placedMs).padStart(6)} ms | ${String(r.isolatedMs).padStart(6)} ms | ${r.ratio.toFixed(2)}x ${r.placed}/${r.isolated}`);
  log(`\nboth passed: ${summary.bothPassed} of ${summary.records}`);
  log(`median per record: ${summary.placedMs.median} ms placed, ${summary.isolatedMs.median} ms isolated`);
  log(`ratio isolated/placed: median ${summary.ratio.median}x (p25 ${summary.ratio.p25}x, p75 ${summary.ratio.p75}x, worst ${summary.ratio.max}x), total ${summary.ratio.total}x; ${summary.recordsAtMost1_3x} of ${summary.records} records at most 1.3x (aim: at most 1.3x per evaluated sample)`);
}

runCommand({ file: __filename, options: OPTIONS, run: ({ values }) => main(values) });
