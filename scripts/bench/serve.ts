/**
 * The verification server's throughput and latency (`npm run bench -- serve`), side by side in one
 * run: POST /verify with each RepoST fixture record's ground truth as the answer, at 1, 8 and 64
 * requests in flight, answered by the server on its warm container pool and by the same server
 * with a fresh container per request (created, started, run and removed: what a `docker run` per
 * request does). The levels alternate pool and fresh, so a loaded machine slows both alike.
 * Packages are installed beforehand, so neither side pays for an install. Prints verifications
 * per second and p50/p99 latency per level and side, and the ratios. Aim: at least 10x the fresh
 * container's throughput and a p50 under 150 ms on the warm pool.
 *
 *   tsx scripts/bench/serve.ts [--records path.jsonl] [--levels 1,8,64] [--requests N] [--pool-size N] [--json]
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import Docker from 'dockerode';
import { z } from 'zod';
import { parseEvalDataset } from '../../activities/eval/dataset';
import { SandboxExecutor, type SandboxExecutorConfig } from '../../activities/sandbox';
import { runLimitsOf } from '../../activities/sandbox/run-request';
import { ServedDatasets, VerificationServer } from '../../activities/serve/http';
import { ensureSandboxImage } from '../../sandbox-image/build';
import { dataPaths, loadConfig } from '../../temporal.config';
import { quantile, round } from '../lib/bench-figures';
import { runCommand } from '../lib/cli';

const OPTIONS = {
  records: { type: 'string', default: path.resolve(__dirname, '../../test/fixtures/repost-execeval-sample.jsonl') },
  levels: { type: 'string', default: '1,8,64' },
  requests: { type: 'string', default: '64' },
  'pool-size': { type: 'string', default: '4' },
  json: { type: 'boolean' },
} as const;

interface Side {
  url: string;
  close(): Promise<void>;
}

async function serve(executor: SandboxExecutor, datasets: ServedDatasets, maxInFlight: number, runTimeoutSec: number, limits: ReturnType<typeof runLimitsOf>): Promise<Side> {
  const server = new VerificationServer({ executor, ping: async () => true, datasets, maxInFlight, maxQueued: 1024, maxBodyBytes: 10 * 1024 * 1024, runTimeoutSec, requestTimeoutSec: 600, limits, token: null });
  const httpServer = http.createServer(server.listener);
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', () => resolve()));
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      httpServer.closeAllConnections();
      await new Promise((r) => httpServer.close(() => r(undefined)));
      await executor.close();
    },
  };
}

interface LevelResult {
  inFlight: number;
  requests: number;
  passed: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** `count` verifications, `inFlight` at a time, cycling through the records. */
async function drive(side: Side, ids: { id: string; completion: string }[], inFlight: number, count: number): Promise<LevelResult> {
  const latencies: number[] = [];
  let passed = 0;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const { id, completion } = ids[i % ids.length]!;
      const t0 = performance.now();
      const res = await fetch(`${side.url}/verify`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ dataset: 'bench', id, completion }) });
      const body = (await res.json()) as { reward?: number };
      latencies.push(performance.now() - t0);
      if (res.status === 200 && body.reward === 1) passed += 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { inFlight, requests: count, passed, seconds: round(seconds), perSecond: round(count / seconds), p50Ms: Math.round(quantile(latencies, 0.5)), p99Ms: Math.round(quantile(latencies, 0.99)) };
}

async function main(values: { records?: string; levels?: string; requests?: string; 'pool-size'?: string; json?: boolean }): Promise<void> {
  const levels = values.levels!.split(',').map((l) => z.coerce.number().int().positive().parse(l));
  const requests = z.coerce.number().int().positive().parse(values.requests);
  const poolSize = z.coerce.number().int().positive().parse(values['pool-size']);
  const config = loadConfig();
  const docker = new Docker();
  const image = config.sandbox.image ?? (await ensureSandboxImage({ docker })).tag;
  const packagesDir = dataPaths(config).packages;
  const base: SandboxExecutorConfig = { ...config.sandbox, workerId: `bench-serve-${process.pid}`, pool: { ...config.sandbox.pool, size: poolSize, recycleAfterRuns: 10_000 } };
  const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
  const records = parseEvalDataset(fs.readFileSync(values.records!, 'utf8'));
  const datasets = new ServedDatasets();
  datasets.add('bench', records);
  const limits = runLimitsOf(config.sandbox);
  const fence = (code: string) => `\`\`\`python\n${code}\n\`\`\``;
  const all = records.map((r) => ({ id: r.functionId, completion: fence(r.origFunc) }));
  log(`${records.length} records; ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; pool of ${poolSize}; ${requests} verifications per level`);

  // Packages first (and the records whose ground truth does not pass here left out), so neither side pays for an install.
  const warm = await serve(new SandboxExecutor(base, { docker, image, packagesDir }), datasets, poolSize, config.sandbox.timeoutSec, limits);
  const passing: typeof all = [];
  try {
    await Promise.all(
      Array.from({ length: poolSize }, async (_, w) => {
        for (let i = w; i < all.length; i += poolSize) {
          const res = await fetch(`${warm.url}/verify`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ dataset: 'bench', ...all[i]! }) });
          if (((await res.json()) as { reward?: number }).reward === 1) passing.push(all[i]!);
        }
      }),
    );
    log(`${passing.length} of ${all.length} records pass with their ground truth here; the bench verifies those`);

    const cold = await serve(new SandboxExecutor({ ...base, strict: true }, { docker, image, packagesDir }), datasets, poolSize, config.sandbox.timeoutSec, limits);
    const rows: { inFlight: number; pool: LevelResult; fresh: LevelResult; throughputRatio: number; p50Ratio: number }[] = [];
    try {
      for (const level of levels) {
        const pool = await drive(warm, passing, level, requests);
        // The same requests, right after, with a fresh container per request.
        const fresh = await drive(cold, passing, level, requests);
        rows.push({ inFlight: level, pool, fresh, throughputRatio: round(pool.perSecond / fresh.perSecond), p50Ratio: round(fresh.p50Ms / pool.p50Ms) });
        log(`${String(level).padStart(3)} in flight: pool ${pool.perSecond}/s p50 ${pool.p50Ms} ms p99 ${pool.p99Ms} ms (${pool.passed}/${pool.requests} reward 1) | fresh container ${fresh.perSecond}/s p50 ${fresh.p50Ms} ms p99 ${fresh.p99Ms} ms (${fresh.passed}/${fresh.requests}) | throughput x${rows.at(-1)!.throughputRatio}, p50 x${rows.at(-1)!.p50Ratio} faster`);
      }
    } finally {
      await cold.close();
    }
    if (values.json) process.stdout.write(`${JSON.stringify({ records: passing.length, poolSize, requests, rows }, null, 1)}\n`);
  } finally {
    await warm.close();
  }
}

runCommand({ file: __filename, options: OPTIONS, run: ({ values }) => main(values) });
