/**
 * LLM gateway benchmark (`npm run bench:llm`), against the scripted OpenAI-compatible server.
 *
 * 1. Overhead: the gateway's own cost per call, with the server answering at zero latency:
 *    the plain `openai` client is the baseline, then the gateway without recording, with
 *    recording (artifact + index writes), and a cache hit.
 * 2. Throughput: many concurrent calls at a simulated model latency, without and with a
 *    requests-per-minute limit, to show that the limit, not the gateway, bounds throughput.
 *
 * Flags: --calls N (overhead calls, default 300), --latency-ms N (default 100),
 *        --rpm N (default 600), --concurrency N (default 16), --throughput-calls N (default 80).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { LlmGateway, renderPrompt, type ChatRequest } from '../../activities/llm';
import { LocalStore } from '../../activities/store/local';
import { createOpenAiClient } from '../../activities/llm/http-agent';
import { loadConfig, type Config, type DeepPartial } from '../../temporal.config';
import { runCommand } from '../lib/cli';
import { startScriptedLlmServer } from '../scripted-llm/server';

const FlagsSchema = z
  .object({
    calls: z.coerce.number().int().positive().default(300),
    'latency-ms': z.coerce.number().int().nonnegative().default(100),
    rpm: z.coerce.number().int().positive().default(600),
    concurrency: z.coerce.number().int().positive().default(16),
    'throughput-calls': z.coerce.number().int().positive().default(80),
  })
  .transform((f) => ({ calls: f.calls, latencyMs: f['latency-ms'], rpm: f.rpm, concurrency: f.concurrency, throughputCalls: f['throughput-calls'] }));

const OPTIONS = { calls: { type: 'string' }, 'latency-ms': { type: 'string' }, rpm: { type: 'string' }, concurrency: { type: 'string' }, 'throughput-calls': { type: 'string' } } as const;

/** A realistic request: the sandbox prompt for a small function (about 600 prompt tokens). */
const CONTEXT = `## pkg/geometry.py\nimport math\n\n${Array.from({ length: 12 }, (_, i) => `def area_${i}(r):\n    """Area of a circle of radius r, scaled by ${i}."""\n    return ${i} * math.pi * r ** 2\n`).join('\n')}`;
const SCRIPTED_ANSWER = `Reasoning: nothing to mock.\n\n\`\`\`python\n${CONTEXT.replace(/^## .*\n/, '')}\`\`\`\n`;

function requestFor(i: number): ChatRequest {
  const p = renderPrompt('sandbox', { functionName: `area_${i % 12}`, filePath: 'pkg/geometry.py', context: `${CONTEXT}\n# variant ${i}\n` });
  return { step: 'sandbox', functionId: `bench-fn-${i}`, messages: p.messages, promptId: p.promptId, promptVersion: p.promptVersion };
}

function stats(samples: number[]): { mean: number; p50: number; p95: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { mean: s.reduce((a, b) => a + b, 0) / s.length, p50: at(0.5), p95: at(0.95) };
}

/**
 * Times each path n times, interleaved (path 1, 2, 3, 4, then again), so a machine whose load
 * changes during the run slows every path alike and the differences stay meaningful.
 */
async function timeInterleaved(n: number, paths: ((i: number) => Promise<unknown>)[]): Promise<number[][]> {
  // Warm up connections and JIT before measuring.
  for (let i = 0; i < Math.min(20, n); i++) for (const fn of paths) await fn(-1 - i);
  const out: number[][] = paths.map(() => []);
  for (let i = 0; i < n; i++) {
    for (const [k, fn] of paths.entries()) {
      const t = performance.now();
      await fn(i);
      out[k]!.push(performance.now() - t);
    }
  }
  return out;
}

function configFor(baseURL: string, dataDir: string, extra: DeepPartial<Config> = {}): Config {
  const llm = (extra.llm ?? {}) as DeepPartial<Config['llm']>;
  return loadConfig({ env: {}, overrides: { ...extra, dataDir, llm: { baseUrl: baseURL, apiKey: 'bench', model: 'gpt-4o', timeoutSec: 60, ...llm } } });
}

async function main(flags: z.infer<typeof FlagsSchema>): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-bench-llm-'));
  const fmt = (ms: number) => ms.toFixed(3).padStart(8);
  try {
    // ---- 1. overhead at zero model latency
    const fast = await startScriptedLlmServer({ rules: [], fallback: SCRIPTED_ANSWER }, { recordRequests: false });
    const client = createOpenAiClient({ baseUrl: fast.url, apiKey: 'bench', timeoutSec: 60 });
    const noCache = configFor(fast.url, dataDir, { llm: { cache: { enabled: false } } });
    const store = new LocalStore(dataDir);
    const bare = new LlmGateway(noCache, store, { record: false });
    const recording = new LlmGateway(noCache, store);
    const cached = new LlmGateway(configFor(fast.url, dataDir), store);
    const hitRequest = requestFor(0);
    await cached.chat(hitRequest);

    const labels = ['openai client alone (baseline)', 'gateway, recording off', 'gateway, recording on', 'gateway, cache hit (recorded)'];
    const samples = await timeInterleaved(flags.calls, [
      (i) => client.chat.completions.create({ model: 'gpt-4o', messages: requestFor(i).messages, temperature: 0, max_tokens: 4096 }),
      (i) => bare.chat(requestFor(i)),
      (i) => recording.chat({ ...requestFor(i), functionId: `rec-${i}` }),
      () => cached.chat(hitRequest),
    ]);
    const rows: [string, number[]][] = labels.map((label, k) => [label, samples[k]!]);
    await fast.close();
    const baseline = stats(rows[0]![1]);
    console.log(`\nLLM gateway overhead per call (scripted server at 0 ms latency, ${flags.calls} interleaved sequential calls per path, ~${Math.round(JSON.stringify(hitRequest.messages).length / 4)} prompt tokens)`);
    console.log(`${'path'.padEnd(34)}${'mean ms'.padStart(9)}${'p50 ms'.padStart(9)}${'p95 ms'.padStart(9)}${'overhead mean/p50 ms'.padStart(22)}`);
    for (const [label, samples] of rows) {
      const s = stats(samples);
      const over = label.startsWith('openai')
        ? ''
        : label.includes('cache hit')
          ? '(no HTTP call)'
          : `${(s.mean - baseline.mean).toFixed(3)} / ${(s.p50 - baseline.p50).toFixed(3)}`;
      console.log(`${label.padEnd(34)}${fmt(s.mean)} ${fmt(s.p50)} ${fmt(s.p95)}${over.padStart(22)}`);
    }

    // ---- 2. throughput at a simulated latency, without and with a rate limit
    const slow = await startScriptedLlmServer({ rules: [], fallback: SCRIPTED_ANSWER }, { latencyMs: flags.latencyMs, recordRequests: false });
    const run = async (label: string, extra: DeepPartial<Config['llm']>) => {
      const config = configFor(slow.url, dataDir, { llm: { cache: { enabled: false }, ...extra } });
      const gateway = new LlmGateway(config, store, { concurrency: flags.concurrency });
      const started = performance.now();
      let next = 0;
      // One worker per concurrency slot, like a worker polling its task queue.
      await Promise.all(
        Array.from({ length: flags.concurrency }, async () => {
          while (next < flags.throughputCalls) {
            const i = next++;
            await gateway.chat({ ...requestFor(i), functionId: `tp-${label}-${i}` });
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      return { label, seconds, perSecond: flags.throughputCalls / seconds };
    };
    const ideal = (flags.concurrency * 1000) / Math.max(1, flags.latencyMs);
    const unlimited = await run('unlimited', {});
    const limited = await run('limited', { requestsPerMinute: flags.rpm });
    await slow.close();
    const limit = flags.rpm / 60;
    // Steady state ignores the first second of budget the bucket holds.
    const expectedLimited = flags.throughputCalls / (Math.max(0, flags.throughputCalls - limit) / limit + flags.latencyMs / 1000);
    console.log(`\nThroughput: ${flags.throughputCalls} calls, ${flags.latencyMs} ms simulated latency, concurrency ${flags.concurrency}`);
    console.log(`${'setting'.padEnd(34)}${'calls/s'.padStart(9)}${'bound calls/s'.padStart(15)}${'seconds'.padStart(9)}`);
    console.log(`${'no rate limit'.padEnd(34)}${unlimited.perSecond.toFixed(1).padStart(9)}${ideal.toFixed(1).padStart(15)}${unlimited.seconds.toFixed(2).padStart(9)}   (bound: concurrency / latency)`);
    console.log(
      `${`rate limit ${flags.rpm} requests/min`.padEnd(34)}${limited.perSecond.toFixed(1).padStart(9)}${expectedLimited.toFixed(1).padStart(15)}${limited.seconds.toFixed(2).padStart(9)}   (bound: ${limit.toFixed(1)}/s after a 1 s burst)`,
    );
    console.log(
      `\nWithout a limit the process reaches ${unlimited.perSecond.toFixed(0)} calls/s (${((unlimited.perSecond / ideal) * 100).toFixed(0)}% of concurrency/latency; the rest is the CPU of the\n` +
        `openai client and the in-process scripted server sharing one event loop, see the baseline above). With the limit,\n` +
        `throughput is ${limited.perSecond.toFixed(1)} calls/s against a bound of ${expectedLimited.toFixed(1)}: the configured limit is what bounds it, not the gateway.`,
    );
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

runCommand({ file: __filename, options: OPTIONS, run: ({ values }) => main(FlagsSchema.parse(values)) });
