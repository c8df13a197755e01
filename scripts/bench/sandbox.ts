/**
 * Sandbox benchmarks, measured side by side in one run (`npm run bench:sandbox`):
 *
 * 1. Overhead of one trivial script, sequentially: the warm pool vs a bare `docker exec` into one
 *    long-lived container (RepoST's way: no fresh directory, no cleanup, no isolation between
 *    runs) vs a cold container per run (strict mode). Aim: pool within 1.5x of the bare exec.
 * 2. Throughput on the RepoST fixture records with their ground truth: the pool at full
 *    concurrency vs one run after another (RepoST's sequential way), package cache warm for both.
 *    Reports how many pass and how many match the coverage rate the record reports.
 * 3. Package installs (network: the index), each in stores made for the benchmark:
 *    - numpy, pandas, requests, pydantic, pyyaml: cold (an empty store: resolution, download,
 *      links, byte code), warm (another requirement set of the same packages: a new environment
 *      from what the store has), and the same set again (found in the store);
 *    - torch: first time (empty uv cache), then a second set that also holds torch;
 *    - disk: the 40 fixture records' packages installed twice under different sets (each record's
 *      set, then the same plus one more package): the store's size (hard links counted once) vs
 *      what per-set copies would take.
 *
 *   tsx scripts/bench/sandbox.ts [--runs N] [--records path.jsonl] [--concurrency N]
 *                                [--skip-overhead] [--skip-records] [--skip-packages] [--skip-torch] [--json]
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Docker from 'dockerode';
import { z } from 'zod';
import { SandboxExecutor, type SandboxExecutorConfig } from '../../activities/sandbox';
import { SCRIPT_USER, runContainerOptions } from '../../activities/sandbox/container-spec';
import { startExec } from '../../activities/sandbox/docker-exec';
import { removeContainer } from '../../activities/sandbox/containers';
import { PackageStore } from '../../activities/sandbox/package-store';
import { groundTruthRequest, mapConcurrent, parseRecordsJsonl, runGroundTruth, type GroundTruthOutcome, type RepostRecord } from '../../activities/sandbox/repost-records';
import { ensureSandboxImage } from '../../sandbox-image/build';
import { dataPaths, loadConfig } from '../../temporal.config';
import { runCommand } from '../lib/cli';

const TRIVIAL = 'print("ok")\n';

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { n: s.length, medianMs: at(0.5), p90Ms: at(0.9), minMs: s[0]!, maxMs: s[s.length - 1]! };
}

type Timed = () => Promise<void>;

/**
 * Times each contender `n` times, round-robin (one run of each in turn), after 3 warm-up rounds,
 * so a busy machine slows all of them alike and the ratios stay meaningful.
 */
async function timeRoundRobin(n: number, contenders: Record<string, Timed>): Promise<Record<string, number[]>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  for (let round = 0; round < n + 3; round++) {
    for (const [name, once] of Object.entries(contenders)) {
      const t0 = performance.now();
      await once();
      if (round >= 3) samples[name]!.push(performance.now() - t0);
    }
  }
  return samples;
}

/** RepoST's way: one long-lived container, the script put there once, `python3 script.py` per run. */
async function bareExecContender(docker: Docker, config: SandboxExecutorConfig, image: string, envsDir: string) {
  const container = await docker.createContainer(runContainerOptions({ image, limits: config, envsDir, workerId: config.workerId!, role: 'baseline' }));
  await container.start();
  const put = await startExec(docker, container, {
    cmd: ['sh', '-c', 'mkdir -p /scratch/bench && cat > /scratch/bench/script.py'],
    user: SCRIPT_USER,
    stdin: Buffer.from(TRIVIAL),
    outputLimitBytes: 1024,
  });
  await put.done;
  const once: Timed = async () => {
    const h = await startExec(docker, container, { cmd: ['python3', '/scratch/bench/script.py'], user: SCRIPT_USER, workingDir: '/scratch/bench', outputLimitBytes: 64 * 1024 });
    const { exitCode } = await h.done;
    if (exitCode !== 0 || h.stdout.toString() !== 'ok\n') throw new Error(`baseline run failed: ${exitCode}`);
  };
  return { once, close: () => removeContainer(container) };
}

function executorContender(executor: SandboxExecutor): Timed {
  return async () => {
    const r = await executor.run({ script: TRIVIAL });
    if (r.status !== 'passed') throw new Error(`run failed: ${r.status} ${r.stderr} ${r.notes.join('; ')}`);
  };
}

function recordSummary(outcomes: GroundTruthOutcome[], wallMs: number) {
  return {
    wallMs: Math.round(wallMs),
    records: outcomes.length,
    passed: outcomes.filter((o) => o.result.status === 'passed').length,
    coverageMatches: outcomes.filter((o) => o.coverageMatches === true).length,
    failures: outcomes
      .filter((o) => o.result.status !== 'passed' || o.coverageMatches === false)
      .map((o) => ({ idx: o.idx, func: o.funcName, status: o.result.status, coverage: o.coverageRate, recordCoverage: o.recordCoverageRate })),
  };
}

/** Bytes on disk under `dir`: hard links counted once (`du`), or once per link (`du -l`, what copies would take). */
function diskBytes(dir: string, countLinks = false): number {
  const r = spawnSync('du', ['-sb', ...(countLinks ? ['-l'] : []), dir], { encoding: 'utf8', timeout: 10 * 60_000 });
  return Number(r.stdout.split('\t')[0] ?? 0);
}

const gb = (bytes: number) => `${(bytes / 1e9).toFixed(2)} GB`;
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

async function timedEnsure(store: PackageStore, requirements: string[]): Promise<number> {
  const t0 = performance.now();
  const r = await store.ensure(requirements);
  if (!r.ok) throw new Error(r.error);
  return Math.round(performance.now() - t0);
}

async function packageBenchmarks(args: {
  docker: Docker;
  image: string;
  base: SandboxExecutorConfig;
  scratch: string;
  records: RepostRecord[];
  torch: boolean;
  log: (line: string) => void;
}): Promise<Record<string, unknown>> {
  const { docker, image, base, scratch, log } = args;
  const report: Record<string, unknown> = {};
  const dirs: string[] = [];
  const newStore = (name: string, uvCacheDir?: string) => {
    const root = fs.mkdtempSync(path.join(scratch, `${name}-`));
    dirs.push(root);
    return new PackageStore({ docker, image, root, workerId: base.workerId!, settings: { ...base.packages, uvCacheDir }, limits: base });
  };
  try {
    const five = ['numpy', 'pandas', 'requests', 'pydantic', 'pyyaml'];
    log(`\npackage installs: ${five.join(', ')}`);
    const first = newStore('five');
    const coldMs = await timedEnsure(first, five);
    // Another requirement set (another key) resolving to the same packages: a new environment
    // from cached wheels and byte code.
    const warmMs = await timedEnsure(first, [...five.slice(0, -1), 'pyyaml>=1']);
    const cachedMs = await timedEnsure(first, five);
    report.common = { packages: five, coldMs, warmMs, sameSetMs: cachedMs };
    log(`  cold (empty store: download, links, byte code) ${coldMs} ms; warm (a new set of the same packages) ${warmMs} ms; the same set again ${cachedMs} ms`);

    if (args.torch) {
      log('\ntorch (PyPI: the CUDA build and the CUDA runtime wheels its libraries link; triton left out)');
      const store = newStore('torch');
      const firstMs = await timedEnsure(store, ['torch']);
      const secondMs = await timedEnsure(store, ['torch', 'six']);
      const bytes = diskBytes(store.root);
      const copies = diskBytes(store.envsDir, true);
      report.torch = { firstMs, secondSetMs: secondMs, storeBytes: bytes, twoSetsAsCopiesBytes: copies };
      log(`  first time ${firstMs} ms; a second set holding torch ${secondMs} ms; store ${gb(bytes)} (two sets as copies: ${gb(copies)})`);
    }

    log(`\ndisk: the ${args.records.length} fixture records' packages, installed twice under different sets`);
    const store = newStore('records');
    const executor = new SandboxExecutor({ ...base, packages: { ...base.packages, uvCacheDir: store.cacheDir } }, { docker, image, packagesDir: store.root });
    let sets = 0;
    try {
      const outcomes = await mapConcurrent(args.records, base.pool.size, (r) => executor.run(groundTruthRequest(r)));
      const requirementSets = outcomes.map((o) => o.requirements).filter((r) => r.length > 0);
      for (const reqs of requirementSets) {
        // The same packages under another set: one more (small) requirement, another key.
        if ((await executor.packages.ensure([...reqs, 'tomli'])).ok) sets += 1;
      }
      sets += new Set(requirementSets.map((r) => r.join(' '))).size;
    } finally {
      await executor.close();
    }
    const storeBytes = diskBytes(store.root);
    const copiesBytes = diskBytes(store.envsDir, true);
    report.disk = { records: args.records.length, sets, storeBytes, setsAsCopiesBytes: copiesBytes, ratio: Number((copiesBytes / storeBytes).toFixed(2)) };
    log(`  ${sets} sets: store ${mb(storeBytes)} (uv cache + environments, hard links counted once); as per-set copies ${mb(copiesBytes)} (${(copiesBytes / storeBytes).toFixed(1)}x)`);
  } finally {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
  return report;
}

const OPTIONS = {
  runs: { type: 'string', default: '30' },
  records: { type: 'string', default: path.resolve(__dirname, '../../test/fixtures/repost-execeval-sample.jsonl') },
  concurrency: { type: 'string' },
  'skip-overhead': { type: 'boolean' },
  'skip-records': { type: 'boolean' },
  'skip-packages': { type: 'boolean' },
  'skip-torch': { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

async function main(values: { runs?: string; records?: string; concurrency?: string; 'skip-overhead'?: boolean; 'skip-records'?: boolean; 'skip-packages'?: boolean; 'skip-torch'?: boolean; json?: boolean }): Promise<void> {
  const runs = z.coerce.number().int().positive().parse(values.runs);
  const config = loadConfig();
  const docker = new Docker();
  const image = config.sandbox.image ?? (await ensureSandboxImage({ docker })).tag;
  const packagesDir = dataPaths(config).packages;
  const base: SandboxExecutorConfig = { ...config.sandbox, workerId: `bench-${process.pid}` };
  const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
  const report: Record<string, unknown> = { image, machine: { cpus: (await import('node:os')).cpus().length } };

  if (!values['skip-overhead']) {
    log(`overhead of a trivial script: ${runs} runs of each, round-robin, after 3 warm-up rounds`);
    const pool = new SandboxExecutor(base, { docker, image, packagesDir });
    const cold = new SandboxExecutor({ ...base, strict: true }, { docker, image, packagesDir });
    const bare = await bareExecContender(docker, base, image, pool.packages.envsDir);
    await pool.warm();
    let samples: Record<string, number[]>;
    try {
      samples = await timeRoundRobin(runs, { pool: executorContender(pool), bareExec: bare.once, cold: executorContender(cold) });
    } finally {
      await pool.close();
      await cold.close();
      await bare.close();
    }
    const overhead = { pool: stats(samples.pool!), bareExec: stats(samples.bareExec!), cold: stats(samples.cold!) };
    const ratio = overhead.pool.medianMs / overhead.bareExec.medianMs;
    report.overhead = { ...overhead, poolVsBareExec: Number(ratio.toFixed(2)), coldVsBareExec: Number((overhead.cold.medianMs / overhead.bareExec.medianMs).toFixed(2)) };
    for (const [name, s] of Object.entries(overhead)) log(`  ${name.padEnd(9)} median ${s.medianMs.toFixed(1)} ms  p90 ${s.p90Ms.toFixed(1)} ms`);
    log(`  pool / bare exec = ${ratio.toFixed(2)}x (aim <= 1.5x); cold / bare exec = ${(overhead.cold.medianMs / overhead.bareExec.medianMs).toFixed(2)}x`);
  }

  if (!values['skip-records']) {
    const records = parseRecordsJsonl(fs.readFileSync(values.records!, 'utf8'));
    const concurrency = values.concurrency ? z.coerce.number().int().positive().parse(values.concurrency) : config.sandbox.pool.size;
    log(`\n${records.length} RepoST records with ground truth`);
    // Warm the package cache first so neither side pays for installs.
    const warmup = new SandboxExecutor(base, { docker, image, packagesDir });
    await mapConcurrent(records, concurrency, (r) => runGroundTruth(warmup, r));
    await warmup.close();

    const full = new SandboxExecutor({ ...base, pool: { ...base.pool, size: concurrency } }, { docker, image, packagesDir });
    await full.warm();
    let t0 = performance.now();
    const parallel = recordSummary(await mapConcurrent(records, concurrency, (r) => runGroundTruth(full, r)), performance.now() - t0);
    await full.close();

    const one = new SandboxExecutor({ ...base, pool: { ...base.pool, size: 1 } }, { docker, image, packagesDir });
    await one.warm();
    t0 = performance.now();
    const sequential = recordSummary(await mapConcurrent(records, 1, (r) => runGroundTruth(one, r)), performance.now() - t0);
    await one.close();

    report.records = { concurrency, pool: parallel, sequential, speedup: Number((sequential.wallMs / parallel.wallMs).toFixed(2)) };
    log(`  pool x${concurrency}: ${parallel.wallMs} ms, ${parallel.passed}/${parallel.records} passed, coverage matches ${parallel.coverageMatches}/${parallel.records}`);
    log(`  sequential: ${sequential.wallMs} ms, ${sequential.passed}/${sequential.records} passed, coverage matches ${sequential.coverageMatches}/${sequential.records}`);
    log(`  speedup ${(sequential.wallMs / parallel.wallMs).toFixed(2)}x`);
    for (const f of parallel.failures) log(`  not matching: ${JSON.stringify(f)}`);
  }
  if (!values['skip-packages']) {
    const scratch = path.join(dataPaths(config).root, 'bench');
    fs.mkdirSync(scratch, { recursive: true });
    const records = parseRecordsJsonl(fs.readFileSync(values.records!, 'utf8'));
    report.packages = await packageBenchmarks({ docker, image, base, scratch, records, torch: !values['skip-torch'], log });
  }
  if (values.json) console.log(JSON.stringify(report, null, 2));
}

runCommand({ file: __filename, options: OPTIONS, run: ({ values }) => main(values) });
