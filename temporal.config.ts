/**
 * The one typed configuration of the factory: defaults, then an optional JSON file
 * (`REPOST_CONFIG`), then environment variables, then explicit overrides (CLI flags, tests).
 *
 * Every key of the schema has an environment variable derived from its path, read from the
 * schema itself (so a new key cannot lack one): `sandbox.memoryMb` -> `REPOST_SANDBOX_MEMORY_MB`,
 * `loops.debugRounds` -> `REPOST_LOOPS_DEBUG_ROUNDS`. The usual names of the ecosystem are honoured
 * too (`TEMPORAL_ADDRESS`, `OPENAI_BASE_URL`, ...). A bad value fails at start with a message
 * naming the key and the variable it came from.
 *
 * Naming: durations are in seconds (`...Sec`), addresses of HTTP services are `...Url`. A key marked
 * `perProcess` belongs to the process that reads it (where things are, credentials, concurrency);
 * every other key is a run setting, frozen into a run when it starts (activities/run-settings.ts).
 * Keys renamed in this release (`RENAMED_KEYS`) are still read under their old names, file keys and
 * environment variables both, with a warning.
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

/** Schema metadata of a key (or a whole section) that belongs to the process, never to a run. */
const PER_PROCESS = { perProcess: true } as const;

/** Price of a model per million tokens, used for cost estimates. */
const PriceSchema = z.object({
  inputPerMTok: z.number().nonnegative(),
  outputPerMTok: z.number().nonnegative(),
  /** Prices of a call answered in a batch (batch mode); default: half the live prices, as the Batch API charges. */
  batchInputPerMTok: z.number().nonnegative().optional(),
  batchOutputPerMTok: z.number().nonnegative().optional(),
  /**
   * Price of prompt tokens the endpoint served from its prompt cache (`usage.prompt_tokens_details.cached_tokens`);
   * default: the input price (no discount known). In batch mode half of it, as for the other prices.
   */
  cachedInputPerMTok: z.number().nonnegative().optional(),
});
const LlmMode = z.enum(['live', 'batch']);

export const ConfigSchema = z.object({
  /** Where runs, artifacts, caches and the embedded Temporal database live. */
  dataDir: z.string().min(1).default('.data').meta(PER_PROCESS),
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
    .prefault({})
    .meta(PER_PROCESS),
  temporal: z
    .object({
      /** host:port of an existing Temporal frontend; unset = start the embedded dev server. */
      address: z.string().min(1).optional(),
      /** The Temporal namespace the factory's workflows run in. */
      namespace: z.string().min(1).default('default'),
      /** Port of the embedded dev server's frontend and of its web UI. */
      port: z.number().int().min(1).max(65535).default(7233),
      /** Port of the embedded dev server's web UI. */
      uiPort: z.number().int().min(1).max(65535).default(8233),
      /**
       * A long activity (an LLM call, a container run) whose worker has not heartbeated for this
       * long is retried elsewhere: how soon work lost with a worker resumes.
       */
      heartbeatTimeoutSec: positiveInt.default(30),
      /** The longest one io activity may take (a snapshot, an analysis, a run's summary and files); it heartbeats meanwhile. */
      ioTimeoutSec: positiveInt.default(1800),
      /**
       * Longest a child workflow may run (a repository, a function, an evaluation's function, a
       * live benchmark firing's crawl) before Temporal ends it and its parent records it as
       * failed; unset = derived from the activity budgets (`activities/workflow-budgets.ts`).
       */
      childTimeoutSec: z
        .object({ repo: positiveInt.optional(), function: positiveInt.optional(), evalFunction: positiveInt.optional(), crawl: positiveInt.optional() })
        .prefault({}),
      /** The `temporal` CLI to use; unset = PATH, then the project-local tools folder. */
      cliPath: z.string().min(1).optional(),
      /** Task queue names, one per kind of work (workers of a role poll its queue); the same everywhere a crawl's workers run. */
      taskQueues: z
        .object({
          workflows: z.string().min(1).default('repost-workflows'),
          llm: z.string().min(1).default('repost-llm'),
          sandbox: z.string().min(1).default('repost-sandbox'),
          io: z.string().min(1).default('repost-io'),
        })
        .prefault({}),
    })
    .prefault({})
    .meta(PER_PROCESS),
  workers: z
    .object({
      /** Concurrent LLM calls per worker process (each mostly waits on the network). */
      llmConcurrency: positiveInt.default(8),
      /** Concurrent container runs per worker process; sized for a 2-core machine. */
      sandboxConcurrency: positiveInt.default(2),
      /** Concurrent repository I/O activities (snapshots, analysis, dataset writes). */
      ioConcurrency: positiveInt.default(2),
      /** Workflow tasks run at once per worker process. */
      workflowTaskConcurrency: positiveInt.default(20),
      /** Task-queue-wide LLM activity rate (activities per second), unset = unlimited. */
      llmActivitiesPerSecond: z.number().positive().optional(),
    })
    .prefault({})
    .meta(PER_PROCESS),
  llm: z
    .object({
      /** The OpenAI-compatible endpoint (a vLLM or Ollama server's is `http://host:port/v1`); the default goes with the default model. */
      baseUrl: z.string().url().default('https://api.openai.com/v1').meta(PER_PROCESS),
      /** The endpoint's API key (any text for a local server that asks for none). */
      apiKey: z.string().default('not-needed').meta(PER_PROCESS),
      /** Default model; each pipeline step may name its own below. */
      model: z.string().min(1).default('gpt-4o'),
      /** The model of one step (sandbox script, tests, debug and coverage rounds, the LLM checks, docstrings, solving); unset = `llm.model`. */
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
      /**
       * How calls are made: `live` (one HTTP call each) or `batch` (collected into Batch API
       * batches, answered within `batch.windowSec`); per step in `modes` (e.g. generation batched,
       * checks live).
       */
      mode: LlmMode.default('live'),
      /** `live` or `batch` for one crawl step; unset = `llm.mode`. */
      modes: z
        .object({
          sandbox: LlmMode.optional(),
          tests: LlmMode.optional(),
          debug: LlmMode.optional(),
          coverage: LlmMode.optional(),
          check: LlmMode.optional(),
        })
        .prefault({}),
      batch: z
        .object({
          /** `openai`: the Batch API at `baseUrl`; `files`: requests.jsonl written under <dataDir>/llm-batches/<id>/, results.jsonl awaited beside it. */
          backend: z.enum(['openai', 'files']).default('openai').meta(PER_PROCESS),
          /** A batch is sent when it holds this many requests, ... */
          maxRequests: z.number().int().min(1).max(50_000).default(50_000).meta(PER_PROCESS),
          /** ... when the next request would take its request file past this many bytes, ... */
          maxBytes: z.number().int().min(1).max(200 * 1024 * 1024).default(200 * 1024 * 1024).meta(PER_PROCESS),
          /** ... or when its oldest request has waited this long. */
          maxWaitSec: z.number().positive().default(600).meta(PER_PROCESS),
          /** How often waiting batches are looked at. */
          pollSec: z.number().positive().default(30).meta(PER_PROCESS),
          /** The longest a batch may take to answer (the Batch API's window is 24 h): a batched call's activity may wait this plus maxWaitSec. */
          windowSec: positiveInt.default(24 * 3600),
        })
        .prefault({}),
      /** Sampling temperature of the crawl's LLM calls. */
      temperature: z.number().min(0).max(2).default(0),
      /** The longest answer asked for, in tokens. */
      maxTokens: positiveInt.default(4096),
      /** The longest one call may take; retries are left to Temporal, the client itself does not retry. */
      timeoutSec: positiveInt.default(120),
      /** Per-process rate limits. */
      requestsPerMinute: positiveInt.optional().meta(PER_PROCESS),
      /** Tokens per minute this process may use (unset = unlimited). */
      tokensPerMinute: positiveInt.optional().meta(PER_PROCESS),
      /** The longest a call waits for a slot under this process's rate limits: an LLM activity may take this plus `timeoutSec`. */
      rateLimitWaitSec: positiveInt.default(300).meta(PER_PROCESS),
      cache: z
        .object({
          /** Answers are cached by content, so unchanged work is not asked again. */
          enabled: z.boolean().default(true),
          /** Cache answers sampled above temperature 0 too (off: sampling stays random). */
          aboveZeroTemperature: z.boolean().default(false),
        })
        .prefault({}),
      /** Prices per model in USD per million tokens (`inputPerMTok`, `outputPerMTok`; `batchInputPerMTok`, `batchOutputPerMTok` for batch answers, default half; `cachedInputPerMTok` for prompt tokens the endpoint's prompt cache served, default the input price), for cost estimates; a model not listed shows as "price unknown". */
      prices: z.record(z.string(), PriceSchema).default({
        'gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10, cachedInputPerMTok: 1.25 },
        'gpt-4o-mini': { inputPerMTok: 0.15, outputPerMTok: 0.6, cachedInputPerMTok: 0.075 },
      }),
    })
    .prefault({}),
  sandbox: z
    .object({
      /** Image reference; unset = the locally built `repost-sandbox:<inputs-hash>`. */
      image: z.string().min(1).optional().meta(PER_PROCESS),
      /** Memory of one run's container (no swap), MiB. */
      memoryMb: positiveInt.default(2048),
      /** CPUs of one run's container. */
      cpus: z.number().positive().default(1),
      /** Processes one run's container may hold. */
      pidsLimit: positiveInt.default(256),
      /** Wall-clock limit of one run, enforced inside the container too. */
      timeoutSec: positiveInt.default(120),
      /** Bytes of stdout and of stderr kept per run (head and tail). */
      outputLimitBytes: positiveInt.default(64 * 1024),
      /** Size of each tmpfs scratch folder of a run, MiB. */
      scratchMb: positiveInt.default(256),
      /** How often a sandbox worker sweeps leftover containers (by label and age, whatever their worker). */
      sweepIntervalSec: positiveInt.default(300).meta(PER_PROCESS),
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
          indexUrl: z.string().url().optional().meta(PER_PROCESS),
          /** Local folders of wheels or source archives searched besides the index. */
          findLinks: z.array(z.string().min(1)).default([]).meta(PER_PROCESS),
          /**
           * A script's packages are resolved as of its code's commit date plus this long (uv's
           * `--exclude-newer`): the releases its repository's users had, and fixes released soon
           * after. A package with no installable release by then takes its newest; code without a
           * date (a folder pinned by its tree's hash) gets the newest releases.
           */
          asOfGraceSec: nonNegativeInt.default(30 * 24 * 3600),
          /** How long a permanent install failure (no wheel, unknown name, conflict, failed build) is remembered; transient ones never are. */
          failureMemorySec: nonNegativeInt.default(3600),
          /** The uv binary; unset = the one scripts/bootstrap.sh installs in .tools/uv, else `uv` on PATH. */
          uvPath: z.string().min(1).optional().meta(PER_PROCESS),
          /** uv's cache (every downloaded wheel, once per machine); unset = `<dataDir>/packages/uv-cache`. Same file system as the store, for hard links. */
          uvCacheDir: z.string().min(1).optional().meta(PER_PROCESS),
        })
        .prefault({}),
      /** The warm container pool: runs reuse cleaned containers (false: a fresh container per run). */
      pool: z
        .object({
          enabled: z.boolean().default(true),
          size: positiveInt.default(2),
          recycleAfterRuns: positiveInt.default(50),
          /** A pool container is replaced once this old, so no live container outlives the leftover sweep's age. */
          maxAgeSec: positiveInt.default(1800),
        })
        .prefault({})
        .meta(PER_PROCESS),
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
      /**
       * Test strength after the coverage rounds: the mutation score of the record's tests (the
       * share of wrong implementations, made from the target by small changes, that they reject).
       * Off by default; when on, every record carries its score, and a record below its split's
       * minimum goes through mutation rounds (tests asked for that tell the surviving mutants
       * apart), then is rejected at stage `mutation` if still below.
       */
      mutation: z
        .object({
          enabled: z.boolean().default(false),
          /** Score a training record must reach (0: scored, never rejected). */
          minScore: fraction.default(0),
          /** Score an evaluation record must reach. */
          evalMinScore: fraction.default(0),
          /** Rounds asking for tests that kill the surviving mutants. */
          rounds: nonNegativeInt.default(1),
          /** Mutants per function at most (sampled with `seed`). */
          cap: positiveInt.max(500).default(30),
          seed: nonNegativeInt.default(0),
        })
        .prefault({}),
      /**
       * Stability: the script run with the ground truth `runs` times (each with another
       * PYTHONHASHSEED, run folder and clock); a record whose outcome or coverage differs is flaky.
       * 0: off.
       */
      stability: z
        .object({
          runs: z.number().int().min(0).max(10).refine((n) => n !== 1, 'a stability check compares at least 2 runs (0: off)').default(0),
          /** Keep a flaky record, labelled `stability: flaky`, instead of rejecting it at stage `stability`. */
          keepFlaky: z.boolean().default(false),
        })
        .prefault({}),
      /**
       * The solvability stage, after the final checks: can a model implement the function from
       * what its prompt shows? `k` implementations from the evaluation's `solve` prompt; when none
       * passes, each failing assertion is judged (the `check_assertion` prompt, the `check` model),
       * and one on behaviour the prompt does not determine is removed (or the record rejected).
       */
      solvability: z
        .object({
          /** Per split: evaluation records are checked, training records are not. */
          enabled: z.object({ train: z.boolean().default(false), eval: z.boolean().default(true) }).prefault({}),
          /** Independent implementations asked from the prompt alone. */
          k: positiveInt.max(20).default(3),
          /** The model that writes them; unset = the `solve` step's model (`llm.models.solve`, else `llm.model`). */
          model: z.string().min(1).optional(),
          /** Their sampling temperature: above 0, so the k answers are independent tries. */
          temperature: z.number().min(0).max(2).default(0.8),
          /** A function without a docstring gets one written from the ground truth (the `docstring` prompt); false: its record is left out of the split. */
          generateDocstrings: z.boolean().default(true),
          /** An assertion on behaviour the prompt does not determine is removed (the script is run again); false: it rejects the record. */
          removeUndetermined: z.boolean().default(true),
          /** Rounds of judging failing assertions while no implementation passes. */
          rounds: positiveInt.max(5).default(2),
        })
        .prefault({}),
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
  analysis: AnalysisOptionsSchema.pick({
    preset: true,
    rules: true,
    minLines: true,
    maxLines: true,
    classRules: true,
    minClassMethods: true,
    maxClassMethods: true,
    minClassLines: true,
    maxClassLines: true,
    extraKeywords: true,
    contextTokenBudget: true,
    contextClosure: true,
    closureDepth: true,
    maxFileBytes: true,
  }).prefault({}),
  crawl: z
    .object({
      /** Candidate functions sampled per repository (seeded by `crawl.seed`); under `--preset repost`, a value you set caps RepoST's sample. */
      maxFunctionsPerRepo: positiveInt.default(30),
      /** What a crawl makes environments of: functions (RepoST), `both` functions and classes, or `classes` only (start.ts --classes, --classes-only). */
      targets: z.enum(['functions', 'both', 'classes']).default('functions'),
      /** Class environments sampled per repository (seeded, like the functions) when classes are made. */
      maxClassesPerRepo: positiveInt.default(10),
      /** Seed of the per-repository samples of functions and classes. */
      seed: z.number().int().default(0),
      /** Children running at once per repository workflow (sliding window). */
      functionWindow: positiveInt.default(8),
      /** Repository workflows running at once per crawl (sliding window). */
      repoWindow: positiveInt.default(4),
      /** Continue-as-new after this many finished children, to keep histories small. */
      continueAsNewAfter: positiveInt.default(200),
      /**
       * Local folders must state one of `crawl.github.licenses` in their license file (a folder
       * without one, or with another license, is skipped with the reason). Off: local folders are
       * crawled whatever their license, which is still detected and recorded. Not a search filter,
       * so not under `github`; the list is the one the GitHub search asks for, so every source of a
       * run is held to the same licenses.
       */
      checkLocalLicenses: z.boolean().default(false),
      /**
       * RepoST's GitHub search filters, the creation-date windows that decide a GitHub
       * repository's split, and the limits of one repository's download.
       */
      github: z
        .object({
          /** Licenses (GitHub keys) the search asks for; with `checkLocalLicenses`, the ones a local folder must state. */
          licenses: z.array(z.string().min(1)).default(['mit']),
          /** The largest repository the GitHub search asks for (GitHub's size, KB). */
          maxRepoSizeKb: positiveInt.default(10 * 1024),
          /** The fewest stars a repository found by the GitHub search has. */
          minStars: nonNegativeInt.default(0),
          /** Include archived repositories in the search (RepoST's search does). */
          includeArchived: z.boolean().default(false),
          /** The largest tarball downloaded (MiB): a larger one is refused as it arrives; unpacked, its tree may take four times this. */
          maxTarballMb: positiveInt.default(100),
          /** One tarball download's deadline: every attempt, every wait between attempts, every redirect and byte. */
          downloadTimeoutSec: positiveInt.default(600),
          /** Creation dates (`from`, `to`, YYYY-MM-DD) of the training split's repositories: the search window of `--github train`, and the split of a listed GitHub repository. */
          trainWindow: z.object({ from: isoDate, to: isoDate }).default({ from: '2023-01-31', to: '2024-08-31' }),
          /** The same for the evaluation split (`--github eval`). */
          evalWindow: z.object({ from: isoDate, to: isoDate }).default({ from: '2024-09-01', to: '2026-12-31' }),
        })
        .prefault({}),
    })
    .prefault({}),
  /** Where GitHub is, and the credentials to use it. */
  github: z
    .object({
      /** The GitHub API (a GitHub Enterprise server's, or a local stand-in). */
      baseUrl: z.string().url().default('https://api.github.com'),
      /** A GitHub token for the search and downloads (higher rate limits). */
      token: z.string().optional(),
    })
    .prefault({})
    .meta(PER_PROCESS),
});

export type Config = z.infer<typeof ConfigSchema>;

/** Well-known variable names of the ecosystem, mapped onto config paths. */
export const ENV_ALIASES: Readonly<Record<string, string>> = {
  TEMPORAL_ADDRESS: 'temporal.address',
  TEMPORAL_NAMESPACE: 'temporal.namespace',
  OPENAI_BASE_URL: 'llm.baseUrl',
  OPENAI_API_KEY: 'llm.apiKey',
  OPENAI_MODEL: 'llm.model',
  GITHUB_TOKEN: 'github.token',
};

/**
 * Keys renamed in this release: the old name (a key or a section) is still read, from the file and
 * from its environment variables, with a warning; the next release drops it.
 */
export const RENAMED_KEYS: readonly { from: string; to: string; convert?: (value: unknown) => unknown; note?: string }[] = [
  { from: 'llm.baseURL', to: 'llm.baseUrl' },
  { from: 'llm.timeoutMs', to: 'llm.timeoutSec', convert: (v) => (typeof v === 'number' ? Math.ceil(v / 1000) : v), note: 'in seconds' },
  { from: 'github.baseURL', to: 'github.baseUrl' },
  { from: 'crawl.licenses', to: 'crawl.github.licenses' },
  { from: 'crawl.maxRepoSizeKb', to: 'crawl.github.maxRepoSizeKb' },
  { from: 'crawl.minStars', to: 'crawl.github.minStars' },
  { from: 'crawl.trainWindow', to: 'crawl.github.trainWindow' },
  { from: 'crawl.evalWindow', to: 'crawl.github.evalWindow' },
];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function envNameFor(keyPath: string): string {
  return 'REPOST_' + keyPath.replace(/\./g, '_').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/** One configuration key as the schema declares it. */
export interface ConfigKey {
  /** Dotted path, e.g. `sandbox.memoryMb`; a record (`llm.prices`) or a date window's part is one key. */
  path: string;
  /** Its environment variable (`REPOST_SANDBOX_MEMORY_MB`). */
  env: string;
  /** The JSON type the environment string is read as. */
  type: 'string' | 'number' | 'boolean' | 'array' | 'object';
  /** Whether it belongs to the process (never frozen into a run). */
  perProcess: boolean;
  /** The values it may take, when the schema lists them (`loops.sanity.testCalls`: literal, reachable). */
  values?: string[];
}

interface JsonSchemaNode {
  type?: string | string[];
  properties?: Record<string, JsonSchemaNode>;
  anyOf?: JsonSchemaNode[];
  enum?: unknown[];
  perProcess?: boolean;
}

let keysCache: { keys: ConfigKey[]; processSections: string[] } | null = null;

/** The schema's keys, read from the schema itself (through its JSON Schema form). */
function schemaKeys(): { keys: ConfigKey[]; processSections: string[] } {
  if (keysCache) return keysCache;
  const root = z.toJSONSchema(ConfigSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchemaNode;
  const keys: ConfigKey[] = [];
  const processSections: string[] = [];
  const walk = (node: JsonSchemaNode, prefix: string, inProcess: boolean): void => {
    const own = node.perProcess === true;
    if (own && !inProcess && prefix) processSections.push(prefix);
    const perProcess = inProcess || own;
    if (node.properties && prefix !== '') {
      for (const [k, child] of Object.entries(node.properties)) walk(child, `${prefix}.${k}`, perProcess);
      return;
    }
    if (node.properties) {
      for (const [k, child] of Object.entries(node.properties)) walk(child, k, perProcess);
      return;
    }
    const types = [node.type ?? node.anyOf?.map((a) => a.type)].flat().filter((t): t is string => typeof t === 'string');
    const type = types.includes('boolean') ? 'boolean' : types.includes('number') || types.includes('integer') ? 'number' : types.includes('array') ? 'array' : types.includes('object') ? 'object' : 'string';
    const values = node.enum?.filter((v): v is string => typeof v === 'string');
    keys.push({ path: prefix, env: envNameFor(prefix), type, perProcess, ...(values?.length ? { values } : {}) });
  };
  walk(root, '', false);
  keysCache = { keys, processSections };
  return keysCache;
}

/** Every key of the configuration, with its environment variable; derived from the schema. */
export function configKeys(): readonly ConfigKey[] {
  return schemaKeys().keys;
}

/** The sections and keys that belong to a process, never to a run (the schema's `perProcess` marks). */
export function processOnlyPaths(): readonly string[] {
  return schemaKeys().processSections;
}

function getPath(obj: unknown, keyPath: string): unknown {
  return keyPath.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}

/**
 * Sets one key; an object on the way that is not there yet starts as its default (`defaults`), so
 * setting one part of a default-valued object (a window's `from`) keeps the others.
 */
function setPath(obj: Record<string, unknown>, keyPath: string, value: unknown, defaults?: unknown): void {
  const keys = keyPath.split('.');
  let cur = obj;
  keys.slice(0, -1).forEach((k, i) => {
    if (!cur[k] || typeof cur[k] !== 'object') {
      const initial = defaults === undefined ? undefined : getPath(defaults, keys.slice(0, i + 1).join('.'));
      cur[k] = initial && typeof initial === 'object' && !Array.isArray(initial) ? structuredClone(initial) : {};
    }
    cur = cur[k] as Record<string, unknown>;
  });
  cur[keys[keys.length - 1]!] = value;
}

function deletePath(obj: Record<string, unknown>, keyPath: string): void {
  const keys = keyPath.split('.');
  const parent = getPath(obj, keys.slice(0, -1).join('.'));
  if (parent && typeof parent === 'object') delete (parent as Record<string, unknown>)[keys[keys.length - 1]!];
}

/** Turns an environment string into the key's type; zod then validates it. */
function coerce(raw: string, type: ConfigKey['type']): Json {
  if (type === 'number') return raw.trim() === '' ? raw : Number(raw);
  if (type === 'boolean') {
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    return raw;
  }
  if (type === 'array') return raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (type === 'object') {
    try {
      return JSON.parse(raw) as Json;
    } catch {
      return raw;
    }
  }
  return raw;
}

/** The key's name in this release (a key under an old name, or inside a renamed section, gets its new one). */
export function currentKeyName(keyPath: string): string {
  const r = RENAMED_KEYS.find((k) => keyPath === k.from || keyPath.startsWith(`${k.from}.`));
  return r ? r.to + keyPath.slice(r.from.length) : keyPath;
}

/**
 * Moves keys given under their old names (`RENAMED_KEYS`) to their new ones in a configuration
 * object (a file's, or a run's frozen settings), converting units where they changed; a key given
 * under both names keeps the new one. `warn` hears of each old name found.
 */
export function migrateRenamedKeys(raw: Record<string, unknown>, warn: (oldPath: string, newPath: string, note?: string) => void = () => undefined): Record<string, unknown> {
  const out = structuredClone(raw);
  for (const r of RENAMED_KEYS) {
    const value = getPath(out, r.from);
    if (value === undefined) continue;
    warn(r.from, r.to, r.note);
    deletePath(out, r.from);
    if (getPath(out, r.to) === undefined) setPath(out, r.to, r.convert ? r.convert(value) : value);
  }
  return out;
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
  /** Where a warning goes (an old key name in use); default: standard error. */
  warn?: (message: string) => void;
}

export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const warn = options.warn ?? ((message: string) => console.warn(`warning: ${message}`));
  const sources = new Map<string, string>();
  let raw: Record<string, unknown> = {};

  if (env.REPOST_CONFIG) {
    try {
      raw = JSON.parse(fs.readFileSync(env.REPOST_CONFIG, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(`REPOST_CONFIG=${env.REPOST_CONFIG}: cannot read a JSON object (${(err as Error).message})`);
    }
    raw = migrateRenamedKeys(raw, (from, to, note) => warn(`${env.REPOST_CONFIG}: ${from} is now ${to}${note ? ` (${note})` : ''}; the old name is read until the next release`));
  }

  // A selection preset (`analysis.preset`, from the overrides, the environment or the file) lies
  // under everything the user gave: its crawl filters are the defaults, so a value set explicitly,
  // or a key set beside them, keeps the preset's others.
  const preset = options.overrides?.analysis?.preset ?? (env[envNameFor('analysis.preset')] || undefined) ?? getPath(raw, 'analysis.preset');
  const presetLayer = presetConfigLayer(preset === 'repost' ? preset : undefined);
  raw = deepMerge(presetLayer, raw);
  const defaults = ConfigSchema.parse(presetLayer);

  const keys = configKeys();
  const envKeys = new Map<string, ConfigKey>();
  for (const k of keys) envKeys.set(k.env, k);
  for (const [name, p] of Object.entries(ENV_ALIASES)) envKeys.set(name, keys.find((k) => k.path === p)!);
  // Old variable names of renamed keys: read when the new one is not set.
  for (const r of RENAMED_KEYS) {
    for (const k of keys.filter((key) => key.path === r.to || key.path.startsWith(`${r.to}.`))) {
      const oldName = envNameFor(r.from + k.path.slice(r.to.length));
      if (oldName === k.env || env[oldName] === undefined || env[oldName] === '') continue;
      if (env[k.env] !== undefined && env[k.env] !== '') continue;
      warn(`${oldName} is now ${k.env}${r.note ? ` (${r.note})` : ''}; the old name is read until the next release`);
      const value = coerce(env[oldName]!, k.type);
      setPath(raw, k.path, r.convert ? r.convert(value) : value, defaults);
      sources.set(k.path, oldName);
    }
  }
  for (const [name, key] of envKeys) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    setPath(raw, key.path, coerce(value, key.type), defaults);
    sources.set(key.path, name);
  }
  if (options.overrides) raw = deepMerge(raw, options.overrides as Record<string, unknown>);

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
