/**
 * The one typed configuration of the factory: defaults, then an optional JSON file
 * (`REPOST_CONFIG`), then environment variables, then explicit overrides (CLI flags, tests).
 *
 * Every leaf key has an environment variable derived from its path:
 * `sandbox.memoryMb` -> `REPOST_SANDBOX_MEMORY_MB`, `loops.debugRounds` -> `REPOST_LOOPS_DEBUG_ROUNDS`.
 * The usual names of the ecosystem are honoured too (`TEMPORAL_ADDRESS`, `OPENAI_BASE_URL`, ...).
 * A bad value fails at start with a message naming the key and the variable it came from.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { presetConfigLayer } from './activities/analysis/presets';
import { AnalysisOptionsSchema } from './activities/analysis/types';

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();
const fraction = z.number().min(0).max(1);
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date as YYYY-MM-DD');

/** Price of a model per million tokens, used for cost estimates. */
const PriceSchema = z.object({ inputPerMTok: z.number().nonnegative(), outputPerMTok: z.number().nonnegative() });

export const ConfigSchema = z.object({
  /** Where runs, artifacts, caches and the embedded Temporal database live. */
  dataDir: z.string().min(1).default('.data'),
  store: z
    .object({
      /**
       * Where runs, artifacts, snapshots, LLM exchanges and records live: unset = the local data
       * directory; `postgres://user:pass@host:port/db` = a PostgreSQL database shared by workers
       * on several machines.
       */
      url: z.string().regex(/^postgres(ql)?:\/\//, 'expected a postgres:// URL').optional(),
      /** Database connections per process (PostgreSQL): enough for the activities a worker runs at once. */
      poolSize: positiveInt.default(10),
    })
    .prefault({}),
  temporal: z
    .object({
      /** host:port of an existing Temporal frontend; unset = start the embedded dev server. */
      address: z.string().min(1).optional(),
      namespace: z.string().min(1).default('default'),
      /** Port of the embedded dev server's frontend and of its web UI. */
      port: z.number().int().min(1).max(65535).default(7233),
      uiPort: z.number().int().min(1).max(65535).default(8233),
      /**
       * A long activity (an LLM call, a container run) whose worker has not heartbeated for this
       * long is retried elsewhere: how soon work lost with a worker resumes.
       */
      heartbeatTimeoutSec: positiveInt.default(30),
      /** The `temporal` CLI to use; unset = PATH, then the project-local tools folder. */
      cliPath: z.string().min(1).optional(),
      taskQueues: z
        .object({
          workflows: z.string().min(1).default('repost-workflows'),
          llm: z.string().min(1).default('repost-llm'),
          sandbox: z.string().min(1).default('repost-sandbox'),
          io: z.string().min(1).default('repost-io'),
        })
        .prefault({}),
    })
    .prefault({}),
  workers: z
    .object({
      /** Concurrent LLM calls per worker process (each mostly waits on the network). */
      llmConcurrency: positiveInt.default(8),
      /** Concurrent container runs per worker process; sized for a 2-core machine. */
      sandboxConcurrency: positiveInt.default(2),
      /** Concurrent repository I/O activities (snapshots, analysis, dataset writes). */
      ioConcurrency: positiveInt.default(2),
      workflowTaskConcurrency: positiveInt.default(20),
      /** Task-queue-wide LLM activity rate (activities per second), unset = unlimited. */
      llmActivitiesPerSecond: z.number().positive().optional(),
    })
    .prefault({}),
  llm: z
    .object({
      baseURL: z.string().url().default('http://127.0.0.1:11434/v1'),
      apiKey: z.string().default('not-needed'),
      /** Default model; each pipeline step may name its own below. */
      model: z.string().min(1).default('gpt-4o'),
      models: z
        .object({
          sandbox: z.string().min(1).optional(),
          tests: z.string().min(1).optional(),
          debug: z.string().min(1).optional(),
          coverage: z.string().min(1).optional(),
          check: z.string().min(1).optional(),
          docstring: z.string().min(1).optional(),
          solve: z.string().min(1).optional(),
        })
        .prefault({}),
      temperature: z.number().min(0).max(2).default(0),
      maxTokens: positiveInt.default(4096),
      timeoutMs: positiveInt.default(120000),
      /** Retries inside one activity attempt are left to Temporal; the client itself does not retry. */
      requestsPerMinute: positiveInt.optional(),
      tokensPerMinute: positiveInt.optional(),
      cache: z
        .object({
          enabled: z.boolean().default(true),
          /** Cache answers sampled above temperature 0 too (off: sampling stays random). */
          aboveZeroTemperature: z.boolean().default(false),
        })
        .prefault({}),
      prices: z.record(z.string(), PriceSchema).default({
        'gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10 },
        'gpt-4o-mini': { inputPerMTok: 0.15, outputPerMTok: 0.6 },
      }),
    })
    .prefault({}),
  sandbox: z
    .object({
      /** Image reference; unset = the locally built `repost-sandbox:<inputs-hash>`. */
      image: z.string().min(1).optional(),
      memoryMb: positiveInt.default(2048),
      cpus: z.number().positive().default(1),
      pidsLimit: positiveInt.default(256),
      timeoutSec: positiveInt.default(120),
      /** Bytes of stdout and of stderr kept per run (head and tail). */
      outputLimitBytes: positiveInt.default(64 * 1024),
      scratchMb: positiveInt.default(256),
      /** How often a sandbox worker sweeps leftover containers (by label and age, whatever their worker). */
      sweepIntervalSec: positiveInt.default(300),
      /** Third-party packages: resolved and downloaded by uv on the host, wheels only, run offline. */
      packages: z
        .object({
          /** Wall-clock limit of one install: resolution, downloads and source builds together. */
          installTimeoutSec: positiveInt.default(600),
          /** Resolutions per script: the first (every import at once), then one per import only a run revealed or per dropped package. */
          resolutionRounds: positiveInt.default(3),
          /** Build distributions that publish no wheel for the sandbox from source, in an offline sandbox container. */
          buildFromSource: z.boolean().default(true),
          /** The package index (default: PyPI, or UV_DEFAULT_INDEX / UV_INDEX_URL / PIP_INDEX_URL). */
          indexUrl: z.string().url().optional(),
          /** Local folders of wheels or source archives searched besides the index. */
          findLinks: z.array(z.string().min(1)).default([]),
          /** How long a permanent install failure (no wheel, unknown name, conflict, failed build) is remembered; transient ones never are. */
          failureMemorySec: nonNegativeInt.default(3600),
          /** The uv binary; unset = the one scripts/bootstrap.sh installs in .tools/uv, else `uv` on PATH. */
          uvPath: z.string().min(1).optional(),
          /** uv's cache (every downloaded wheel, once per machine); unset = `<dataDir>/packages/uv-cache`. Same file system as the store, for hard links. */
          uvCacheDir: z.string().min(1).optional(),
        })
        .prefault({}),
      pool: z
        .object({
          enabled: z.boolean().default(true),
          size: positiveInt.default(2),
          recycleAfterRuns: positiveInt.default(50),
          /** A pool container is replaced once this old, so no live container outlives the leftover sweep's age. */
          maxAgeSec: positiveInt.default(1800),
        })
        .prefault({}),
    })
    .prefault({}),
  loops: z
    .object({
      /** k: debug rounds after a failing execution. */
      debugRounds: nonNegativeInt.default(3),
      /** Rounds asking for more tests when branch coverage is below the threshold. */
      coverageRounds: nonNegativeInt.default(2),
      /** Branch coverage a training record must reach (RepoST: 0.8). */
      coverageThreshold: fraction.default(0.8),
      /** Branch coverage an evaluation record must reach (RepoST: 1.0). */
      evalCoverageThreshold: fraction.default(1),
      /** Evaluation records need the sandboxed function's AST to equal the original's (RepoST). */
      evalRequiresAstMatch: z.boolean().default(true),
      /** Regenerations after an output that failed to parse or a failed sanity check. */
      regenerateAttempts: nonNegativeInt.default(2),
      /** How the sanity checks read an answer. */
      sanity: z
        .object({
          /**
           * How the test function must reach `f` and `f_new_implementation`: `literal` (RepoST's
           * rule): its own text calls both; `reachable`: it reaches a call of each through the
           * script's own functions (a helper it hands them to, a loop over the two).
           */
          testCalls: z.enum(['literal', 'reachable']).default('literal'),
        })
        .prefault({}),
    })
    .prefault({}),
  /** Candidate filters (each rule can be switched off) and context limits of the static analysis. */
  analysis: AnalysisOptionsSchema.pick({ preset: true, rules: true, minLines: true, maxLines: true, extraKeywords: true, contextTokenBudget: true, maxFileBytes: true }).prefault({}),
  crawl: z
    .object({
      maxFunctionsPerRepo: positiveInt.default(30),
      seed: z.number().int().default(0),
      /** Children running at once per repository workflow (sliding window). */
      functionWindow: positiveInt.default(8),
      /** Repository workflows running at once per crawl (sliding window). */
      repoWindow: positiveInt.default(4),
      /** Continue-as-new after this many finished children, to keep histories small. */
      continueAsNewAfter: positiveInt.default(200),
      licenses: z.array(z.string().min(1)).default(['mit']),
      /**
       * Apply `licenses` to local folders too, by the license their license file states (a folder
       * without one, or with another license, is skipped). Off: local folders are crawled whatever
       * their license, which is still detected and recorded.
       */
      checkLocalLicenses: z.boolean().default(false),
      maxRepoSizeKb: positiveInt.default(10 * 1024),
      minStars: nonNegativeInt.default(0),
      /** Include archived repositories in the GitHub search (RepoST's search does). */
      includeArchived: z.boolean().default(false),
      trainWindow: z.object({ from: isoDate, to: isoDate }).default({ from: '2023-01-31', to: '2024-08-31' }),
      evalWindow: z.object({ from: isoDate, to: isoDate }).default({ from: '2024-09-01', to: '2026-12-31' }),
    })
    .prefault({}),
  github: z
    .object({
      baseURL: z.string().url().default('https://api.github.com'),
      token: z.string().optional(),
    })
    .prefault({}),
});

export type Config = z.infer<typeof ConfigSchema>;

/** Well-known variable names of the ecosystem, mapped onto config paths. */
const ENV_ALIASES: Record<string, string> = {
  TEMPORAL_ADDRESS: 'temporal.address',
  TEMPORAL_NAMESPACE: 'temporal.namespace',
  OPENAI_BASE_URL: 'llm.baseURL',
  OPENAI_API_KEY: 'llm.apiKey',
  OPENAI_MODEL: 'llm.model',
  GITHUB_TOKEN: 'github.token',
};

/** Config paths whose environment variable is not derivable from the defaults (no default value). */
const OPTIONAL_PATHS = [
  'store.url',
  'temporal.address',
  'temporal.cliPath',
  'workers.llmActivitiesPerSecond',
  'llm.models.sandbox',
  'llm.models.tests',
  'llm.models.debug',
  'llm.models.coverage',
  'llm.models.check',
  'llm.models.docstring',
  'llm.models.solve',
  'llm.requestsPerMinute',
  'llm.tokensPerMinute',
  'sandbox.image',
  'sandbox.packages.indexUrl',
  'sandbox.packages.uvPath',
  'sandbox.packages.uvCacheDir',
  'github.token',
];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function envNameFor(keyPath: string): string {
  return 'REPOST_' + keyPath.replace(/\./g, '_').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

function leafPaths(value: unknown, prefix = ''): string[] {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    // Records (prices) are overridden as one JSON value.
    if (prefix === 'llm.prices') return [prefix];
    return entries.flatMap(([k, v]) => leafPaths(v, prefix ? `${prefix}.${k}` : k));
  }
  return [prefix];
}

function getPath(obj: unknown, keyPath: string): unknown {
  return keyPath.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}

function setPath(obj: Record<string, unknown>, keyPath: string, value: unknown): void {
  const keys = keyPath.split('.');
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    if (!cur[k] || typeof cur[k] !== 'object') cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[keys[keys.length - 1]!] = value;
}

/** Turns an environment string into the type the default value has; zod then validates it. */
function coerce(raw: string, like: unknown): Json {
  if (typeof like === 'number') return raw.trim() === '' ? raw : Number(raw);
  if (typeof like === 'boolean') {
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    return raw;
  }
  if (Array.isArray(like)) return raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (like && typeof like === 'object') {
    try {
      return JSON.parse(raw) as Json;
    } catch {
      return raw;
    }
  }
  // Optional numeric keys have no default to learn the type from.
  if (like === undefined && /^-?\d+(\.\d+)?$/.test(raw.trim())) return Number(raw);
  return raw;
}

export function deepMerge(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) continue;
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K] };

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  overrides?: DeepPartial<Config>;
}

export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const defaults = ConfigSchema.parse({});
  const sources = new Map<string, string>();
  let raw: Record<string, unknown> = {};

  if (env.REPOST_CONFIG) {
    try {
      raw = JSON.parse(fs.readFileSync(env.REPOST_CONFIG, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(`REPOST_CONFIG=${env.REPOST_CONFIG}: cannot read a JSON object (${(err as Error).message})`);
    }
  }

  const envPaths = new Map<string, string>();
  for (const p of [...leafPaths(defaults), ...OPTIONAL_PATHS]) envPaths.set(envNameFor(p), p);
  for (const [name, p] of Object.entries(ENV_ALIASES)) envPaths.set(name, p);
  for (const [name, keyPath] of envPaths) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    setPath(raw, keyPath, coerce(value, getPath(defaults, keyPath)));
    sources.set(keyPath, name);
  }
  if (options.overrides) raw = deepMerge(raw, options.overrides as Record<string, unknown>);
  // A selection preset lies under what the user gave: its crawl filters, unless set explicitly.
  const preset = (raw.analysis as { preset?: unknown } | undefined)?.preset;
  if (preset === 'repost') raw = deepMerge(presetConfigLayer(preset), raw);

  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const keyPath = issue.path.join('.');
      const from = sources.get(keyPath) ?? sources.get(issue.path.slice(0, 2).join('.'));
      return `  ${keyPath}${from ? ` (from ${from})` : ''}: ${issue.message}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const config = parsed.data;
  config.dataDir = path.resolve(config.dataDir);
  return config;
}

/** Paths under the data directory, in one place. */
export function dataPaths(config: Pick<Config, 'dataDir'>) {
  const root = config.dataDir;
  return {
    root,
    artifacts: path.join(root, 'artifacts'),
    runs: path.join(root, 'runs'),
    snapshots: path.join(root, 'snapshots'),
    packages: path.join(root, 'packages'),
    temporalDb: path.join(root, 'temporal', 'dev-server.sqlite'),
    logs: path.join(root, 'logs'),
  };
}
