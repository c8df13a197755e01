/**
 * The verification server: answers run and verify requests over HTTP from the warm container pool
 * (docs/serve.md), for RL trainers and evaluators that call a URL.
 *
 *   tsx scripts/serve.ts [--dataset [NAME=]FILE ...] [--port N] [--host H] [--token T]
 *                        [--pool-size N] [--max-in-flight N] [--max-queued N] [--max-body-bytes N]
 *                        [--run-timeout S] [--request-timeout S]
 *
 *   POST /run_code   SandboxFusion's run_code for Python (verl's reward_model.sandbox_fusion.url
 *                    is http://HOST:PORT/run_code)
 *   POST /verify     {dataset, id, completion} or {record, completion} -> {reward, passed, kind,
 *                    tests, duration}: the verdict eval.ts gives the same answer
 *   GET  /health     200 {status: ok}, or 503 while the container engine does not answer
 *   GET  /metrics    requests by status, queue depth, in flight, latency p50/p90/p99, pool state
 *                    (JSON; Prometheus text with ?format=prometheus)
 *
 * --dataset: a dataset.jsonl (ours or RepoST's format), or a folder holding one; its name in
 * requests is NAME, else the file's name without .jsonl (a folder: the folder's name).
 * --token (or REPOST_SERVE_TOKEN): every request but /health needs `Authorization: Bearer T`.
 * --max-in-flight defaults to the pool size (sandbox.pool.size, or --pool-size); --max-queued
 * (default 256) requests wait beyond it, and past that a request gets 429 with Retry-After.
 * --run-timeout defaults to sandbox.timeoutSec; --request-timeout (queue wait included) to twice
 * that plus 60. Listens on 127.0.0.1:8080 unless told otherwise (--port 0: any free port); prints
 * `serve: listening on http://HOST:PORT` once ready. SIGINT or SIGTERM stops it.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { z } from 'zod';
import { SandboxExecutor } from '../activities/sandbox';
import { runLimitsOf } from '../activities/sandbox/run-request';
import { ServedDatasets, VerificationServer } from '../activities/serve/http';
import { ensureSandboxImage } from '../sandbox-image/build';
import { dataPaths, loadConfig } from '../temporal.config';
import { runCommand, UsageError } from './lib/cli';
import { loadDataset } from './lib/eval-run';

const positive = z.coerce.number().int().positive();

/** `NAME=FILE` or `FILE` (a .jsonl file, or a folder with a dataset.jsonl) as a name and a file. */
function datasetArgument(arg: string): { name: string; file: string } {
  const eq = arg.indexOf('=');
  const named = eq > 0 && !fs.existsSync(arg) ? { name: arg.slice(0, eq), target: arg.slice(eq + 1) } : null;
  const target = named?.target ?? arg;
  if (!fs.existsSync(target)) throw new UsageError(`--dataset: no such file or folder: ${target}`);
  const isDir = fs.statSync(target).isDirectory();
  const file = isDir ? path.join(target, 'dataset.jsonl') : target;
  if (isDir && !fs.existsSync(file)) throw new UsageError(`--dataset: the folder ${target} holds no dataset.jsonl`);
  const name = named?.name ?? (isDir ? path.basename(path.resolve(target)) : path.basename(target).replace(/\.jsonl$/, ''));
  return { name, file };
}

runCommand({
  file: __filename,
  options: {
    dataset: { type: 'string', multiple: true },
    port: { type: 'string' },
    host: { type: 'string' },
    token: { type: 'string' },
    'pool-size': { type: 'string' },
    'max-in-flight': { type: 'string' },
    'max-queued': { type: 'string' },
    'max-body-bytes': { type: 'string' },
    'run-timeout': { type: 'string' },
    'request-timeout': { type: 'string' },
  },
  async run({ values }) {
    const config = loadConfig();
    const port = values.port === undefined ? 8080 : z.coerce.number().int().min(0).max(65535).parse(values.port);
    const host = values.host ?? '127.0.0.1';
    const poolSize = values['pool-size'] ? positive.parse(values['pool-size']) : config.sandbox.pool.size;
    const maxInFlight = values['max-in-flight'] ? positive.parse(values['max-in-flight']) : poolSize;
    const maxQueued = values['max-queued'] ? z.coerce.number().int().min(0).parse(values['max-queued']) : 256;
    const maxBodyBytes = values['max-body-bytes'] ? positive.parse(values['max-body-bytes']) : 10 * 1024 * 1024;
    const runTimeoutSec = values['run-timeout'] ? positive.parse(values['run-timeout']) : config.sandbox.timeoutSec;
    const requestTimeoutSec = values['request-timeout'] ? positive.parse(values['request-timeout']) : runTimeoutSec * 2 + 60;
    const token = values.token ?? process.env.REPOST_SERVE_TOKEN ?? null;
    if (token !== null && !/^\S{8,500}$/.test(token)) throw new UsageError('--token: 8 to 500 characters, no white space');

    const datasets = new ServedDatasets();
    for (const arg of values.dataset ?? []) {
      const { name, file } = datasetArgument(arg);
      try {
        datasets.add(name, loadDataset(file).records);
      } catch (err) {
        throw new UsageError(`--dataset ${arg}: ${(err as Error).message}`);
      }
    }

    const log = (line: string) => process.stderr.write(`${line}\n`);
    const sandbox = { ...config.sandbox, pool: { ...config.sandbox.pool, size: poolSize } };
    const image = sandbox.image ?? (await ensureSandboxImage({ log })).tag;
    const executor = new SandboxExecutor(sandbox, { image, packagesDir: dataPaths(config).packages });
    await executor.cleanupLeftovers();
    executor.startLeftoverSweep();
    await executor.warm();
    const ping = async () => {
      try {
        await Promise.race([executor.docker.ping(), new Promise((_, reject) => setTimeout(() => reject(new Error('ping timed out')), 3000).unref())]);
        return true;
      } catch {
        return false;
      }
    };
    const server = new VerificationServer({ executor, ping, datasets, maxInFlight, maxQueued, maxBodyBytes, runTimeoutSec, requestTimeoutSec, limits: runLimitsOf(sandbox), token, log });
    const httpServer = http.createServer({ requestTimeout: (requestTimeoutSec + 30) * 1000, headersTimeout: 30_000 }, server.listener);
    const probe = setInterval(() => void server.tick(), 2000);
    await new Promise<void>((resolve, reject) => {
      httpServer.once('error', reject);
      httpServer.listen(port, host, () => resolve());
    });
    const address = httpServer.address();
    const shown = typeof address === 'object' && address ? `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}` : String(address);
    const served = datasets.names.map((n) => `${n} (${datasets.size(n)} records)`).join(', ') || 'none';
    process.stdout.write(`serve: listening on ${shown} (pool of ${poolSize}, ${maxInFlight} in flight, ${maxQueued} queued; datasets: ${served}${token ? '; bearer token required' : ''})\n`);

    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    log('serve: stopping');
    clearInterval(probe);
    httpServer.close();
    httpServer.closeAllConnections();
    await executor.close();
    return 0;
  },
});
