/** The `llm` section of the configuration. The LLM endpoint, the models of each step, live or batch calls, sampling, rate limits, the cache and prices. */
import { z } from 'zod';
import { PER_PROCESS, positiveInt } from '../shapes';

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

export const LlmSection = z
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
  .prefault({});
