/**
 * The one door to the LLM. Every pipeline step calls `LlmGateway.chat`, which
 *   1. picks the model for the step and the sampling parameters from configuration,
 *   2. answers from the content-addressed cache when it may (zero tokens),
 *   3. otherwise waits for the per-process rate limiter and calls the OpenAI-compatible
 *      endpoint through the `openai` client with its own retries off (Temporal retries the
 *      activity; a transient fault is an `LlmTransientError` carrying Retry-After, anything
 *      else that cannot succeed on retry is an `LlmPermanentError`),
 *   4. records the exchange in the artifact store and the per-function index, with tokens,
 *      latency and estimated cost, whatever the outcome.
 */
import type OpenAI from 'openai';
import { z } from 'zod';
import type { Config } from '../../temporal.config';
import type { Store } from '../store/types';
import { cacheKeyOf } from './cache';
import { chatCompletionBody, readCompletion } from './completion';
import { estimateCostUsd } from './cost';
import { LlmPermanentError, LlmTransientError, classifyLlmError } from './errors';
import { EXCHANGE_SCHEMA, type ExchangeRecord } from './exchange';
import type { BatchRequestOutcome } from './batch/outcome';
import { createOpenAiClient } from './http-agent';
import { RateLimiter } from './rate-limiter';
import { estimateMessagesTokens, estimateTokens } from './tokens';
import { LLM_STEPS, type ChatOutcome, type ChatRequest, type LlmStep } from './types';

/** Which configured model a step uses when the request does not name one. */
export function modelForStep(config: Pick<Config, 'llm'>, step: LlmStep): string {
  const m = config.llm.models;
  const byStep: Record<LlmStep, string | undefined> = {
    sandbox: m.sandbox,
    aggregate: m.sandbox,
    tests: m.tests,
    debug: m.debug,
    coverage: m.coverage,
    // Tests that kill surviving mutants are written as coverage tests are.
    mutation: m.coverage,
    check_functionality: m.check,
    check_tests: m.check,
    docstring: m.docstring,
    solve: m.solve,
    // Self-repair and the candidate tests of dual ranking are the evaluated model's own work.
    repair: m.solve,
    candidate_tests: m.solve,
    // Extra equivalence inputs are part of building the dataset, like its tests.
    test_inputs: m.tests,
    // A class's steps use the models of the function's steps they stand for.
    class_sandbox: m.sandbox,
    class_tests: m.tests,
    class_debug: m.debug,
    class_coverage: m.coverage,
    class_check_functionality: m.check,
    class_check_tests: m.check,
    class_solve: m.solve,
    // Repairing a class is the evaluated model's own work, as repairing a function is.
    class_repair: m.solve,
    // Whether a prompt determines what an assertion checks: a check, like the test check.
    check_assertion: m.check,
  };
  return byStep[step] ?? config.llm.model;
}

export type LlmMode = 'live' | 'batch';

/**
 * Whether a step's calls go live or into batches (`llm.mode`, per step in `llm.modes`). The
 * evaluation's steps are always live.
 */
export function modeForStep(llm: Pick<Config['llm'], 'mode' | 'modes'>, step: LlmStep): LlmMode {
  const m = llm.modes;
  const byStep: Partial<Record<LlmStep, LlmMode | undefined>> = {
    sandbox: m.sandbox ?? llm.mode,
    aggregate: m.sandbox ?? llm.mode,
    tests: m.tests ?? llm.mode,
    debug: m.debug ?? llm.mode,
    coverage: m.coverage ?? llm.mode,
    check_functionality: m.check ?? llm.mode,
    check_tests: m.check ?? llm.mode,
  };
  return byStep[step] ?? 'live';
}

const ChatRequestSchema = z.object({
  step: z.enum(LLM_STEPS),
  functionId: z.string().min(1),
  runId: z.string().optional(),
  repoId: z.string().optional(),
  messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })).min(1),
  model: z.string().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().positive().optional(),
  promptId: z.string().optional(),
  promptVersion: z.string().optional(),
  attempt: z.number().int().nonnegative().optional(),
});

/** Headers naming the step and function, so servers and proxies can attribute a request. */
export const STEP_HEADER = 'x-repost-step';
export const FUNCTION_HEADER = 'x-repost-function-id';

export interface LlmGatewayOptions {
  /** Share one limiter between gateways of a process; default: a new one from config. */
  rateLimiter?: RateLimiter;
  /** Calls in flight at once in this process; default `workers.llmConcurrency`. */
  concurrency?: number;
  /** Write exchanges and the index (default true). */
  record?: boolean;
}

/** The model-facing settings of one call: a run's frozen `llm` settings, or the process's own. */
export type LlmSettings = Config['llm'];

export interface ChatOptions {
  /** Aborts the HTTP call (pass the activity's cancellation signal). */
  signal?: AbortSignal;
  /** The run's settings (model per step, sampling, timeout, cache policy, prices); default: the process's. */
  llm?: LlmSettings;
  /**
   * Reviews an answer (fresh or from the cache) before it is recorded: the checks that refuse it,
   * empty when it is usable. The exchange and its index entry carry them (`refusedBy`), so a run
   * can tell what refused answers cost. A review that throws leaves the exchange unmarked.
   */
  review?: (answer: { text: string; finishReason: string | null }) => string[];
  /** Batch mode: the call is not made here (see `BatchCall`). */
  batch?: BatchCall;
}

/** A batch answer being delivered to the request that asked it. */
export interface DeliveredBatchAnswer {
  outcome: BatchRequestOutcome;
  batchId: string;
  /** The cache key of the request that was handed over: the delivery must be for the same request. */
  cacheKey: string;
  /** How long the request waited, from its hand-over to its answer. */
  waitedMs: number;
}

/**
 * A call in batch mode. Without `delivered`, a request that the cache cannot answer is handed
 * over (`handOver` never returns: it stores the request for the collector and ends the attempt
 * as waiting); with it, the batch's answer is recorded, cached and priced (at the batch price)
 * and returned, or its error thrown, exactly as a live call's.
 */
export interface BatchCall {
  delivered?: DeliveredBatchAnswer;
  handOver(request: { cacheKey: string; call: ExchangeRecord['request']; step: LlmStep; functionId: string; runId?: string }): Promise<never>;
}


/** The part of an exchange record known before the call. */
type ExchangeBase = Pick<ExchangeRecord, 'schema' | 'step' | 'functionId' | 'runId' | 'repoId' | 'promptId' | 'promptVersion' | 'attempt' | 'baseURL' | 'request' | 'cacheKey'>;

/** The `refusedBy` of an answer the caller reviews; nothing when there is no review or it fails. */
function reviewed(review: ChatOptions['review'], text: string, finishReason: string | null): { refusedBy?: string[] } {
  if (!review) return {};
  try {
    return { refusedBy: [...new Set(review({ text, finishReason }))] };
  } catch {
    return {};
  }
}

export class LlmGateway {
  /** One client per LLM timeout in use (the process's, and any run's own), each with its HTTP agent. */
  private readonly clients = new Map<number, OpenAI>();
  /** Cacheable calls on their way, by cache key. */
  private readonly inFlight = new Map<string, Promise<ChatOutcome>>();
  readonly limiter: RateLimiter;
  private readonly record: boolean;

  constructor(
    private readonly config: Config,
    private readonly store: Store,
    options: LlmGatewayOptions = {},
  ) {
    this.limiter =
      options.rateLimiter ??
      new RateLimiter({
        requestsPerMinute: config.llm.requestsPerMinute,
        tokensPerMinute: config.llm.tokensPerMinute,
        concurrency: options.concurrency ?? config.workers.llmConcurrency,
      });
    this.record = options.record ?? true;
  }

  /** The client for a run's LLM timeout: its HTTP agent waits as long as the run allows, not undici's five minutes. */
  private clientFor(timeoutSec: number): OpenAI {
    let client = this.clients.get(timeoutSec);
    if (!client) {
      client = createOpenAiClient({ baseUrl: this.config.llm.baseUrl, apiKey: this.config.llm.apiKey, timeoutSec });
      this.clients.set(timeoutSec, client);
    }
    return client;
  }

  /** Whether answers at this temperature may be served from (and stored in) the cache. */
  cacheable(temperature: number, llm: LlmSettings = this.config.llm): boolean {
    const c = llm.cache;
    return c.enabled && (temperature === 0 || c.aboveZeroTemperature);
  }

  /**
   * One chat completion. `options.signal` aborts the HTTP call (pass the activity's
   * cancellation signal so a cancelled activity stops waiting on the model); `options.llm` are
   * the run's settings.
   */
  async chat(input: ChatRequest, options: ChatOptions = {}): Promise<ChatOutcome> {
    const llm = options.llm ?? this.config.llm;
    const checked = ChatRequestSchema.safeParse(input);
    if (!checked.success) {
      throw new LlmPermanentError(`invalid chat request: ${checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, undefined);
    }
    const req = checked.data;
    const model = req.model ?? modelForStep({ llm }, req.step);
    const temperature = req.temperature ?? llm.temperature;
    const maxTokens = req.maxTokens ?? llm.maxTokens;
    const attempt = req.attempt ?? 0;
    const cacheKey = cacheKeyOf({ model, messages: req.messages, temperature, maxTokens, attempt });
    const base: ExchangeBase = {
      schema: EXCHANGE_SCHEMA,
      step: req.step,
      functionId: req.functionId,
      runId: req.runId,
      repoId: req.repoId,
      promptId: req.promptId,
      promptVersion: req.promptVersion,
      attempt,
      baseURL: this.config.llm.baseUrl,
      request: { model, messages: req.messages, temperature, maxTokens },
      cacheKey,
    };

    const useCache = this.cacheable(temperature, llm);
    if (options.batch?.delivered) return this.recordBatchAnswer(options.batch.delivered, base, { useCache, llm, review: options.review });
    if (options.batch) {
      const hit = useCache ? await this.fromCache(cacheKey, base, options.review) : undefined;
      if (hit) return hit;
      return options.batch.handOver({ cacheKey, call: base.request, step: req.step, functionId: req.functionId, ...(req.runId !== undefined ? { runId: req.runId } : {}) });
    }
    if (useCache) {
      const hit = await this.fromCache(cacheKey, base, options.review);
      if (hit) return hit;
      // An identical request already on its way (a replay racing the original, two workflows
      // asking the same thing): wait for it and answer from the cache instead of paying twice.
      const pending = this.inFlight.get(cacheKey);
      if (pending) {
        await pending.catch(() => undefined);
        const shared = await this.fromCache(cacheKey, base, options.review);
        if (shared) return shared;
      }
    }
    const call = this.callModel(req.messages, base, { useCache, signal: options.signal, llm, review: options.review });
    if (useCache) {
      this.inFlight.set(cacheKey, call);
      const forget = () => {
        if (this.inFlight.get(cacheKey) === call) this.inFlight.delete(cacheKey);
      };
      call.then(forget, forget);
    }
    return call;
  }

  /** One HTTP call to the endpoint, recorded whatever its outcome. */
  private async callModel(
    messages: ChatRequest['messages'],
    base: ExchangeBase,
    opts: { useCache: boolean; signal?: AbortSignal; llm: LlmSettings; review?: ChatOptions['review'] },
  ): Promise<ChatOutcome> {
    const { model } = base.request;
    const { cacheKey } = base;
    const useCache = opts.useCache;
    const estimatedPrompt = estimateMessagesTokens(messages);
    const permit = await this.limiter.acquire(model, estimatedPrompt);
    const started = performance.now();
    let usedTokens: number | undefined;
    try {
      let raw: unknown;
      try {
        raw = await this.clientFor(opts.llm.timeoutSec).chat.completions.create(
          chatCompletionBody(base.request),
          { headers: { [STEP_HEADER]: base.step, [FUNCTION_HEADER]: base.functionId }, timeout: opts.llm.timeoutSec * 1000, ...(opts.signal ? { signal: opts.signal } : {}) },
        );
      } catch (err) {
        throw classifyLlmError(err, {
          model,
          baseURL: this.config.llm.baseUrl,
          elapsedMs: performance.now() - started,
          timeoutMs: opts.llm.timeoutSec * 1000,
        });
      }
      const latencyMs = Math.round(performance.now() - started);
      const completion = readCompletion(raw, `model ${model} at ${this.config.llm.baseUrl}`);
      const { text, finishReason } = completion;
      const estimated = !completion.usage;
      const promptTokens = completion.usage?.promptTokens ?? estimatedPrompt;
      const completionTokens = completion.usage?.completionTokens ?? estimateTokens(text);
      const cachedPromptTokens = completion.usage?.cachedPromptTokens ?? 0;
      usedTokens = promptTokens + completionTokens;
      const costUsd = estimateCostUsd(opts.llm.prices, model, promptTokens, completionTokens, 'live', cachedPromptTokens);
      const record: ExchangeRecord = {
        ...base,
        response: { text, finishReason, model: completion.model ?? model, ...(completion.id ? { id: completion.id } : {}) },
        usage: { promptTokens, completionTokens, estimated, ...(cachedPromptTokens ? { cachedPromptTokens } : {}) },
        costUsd,
        latencyMs,
        queuedMs: Math.round(permit.waitedMs),
        cached: false,
        ...reviewed(opts.review, text, finishReason),
        recordedAt: new Date().toISOString(),
      };
      const exchangeKey = await this.persist(record);
      if (useCache && this.record) await this.store.cachePut(cacheKey, exchangeKey);
      return { text, model, promptTokens, completionTokens, cachedPromptTokens, costUsd, cached: false, latencyMs, finishReason, exchangeKey };
    } catch (err) {
      const failure = err instanceof LlmTransientError || err instanceof LlmPermanentError ? err : classifyLlmError(err, { model, baseURL: this.config.llm.baseUrl });
      await this.persist({
        ...base,
        response: null,
        error: {
          kind: failure instanceof LlmTransientError ? 'transient' : 'permanent',
          message: failure.message,
          ...(failure.status !== undefined ? { status: failure.status } : {}),
          ...(failure instanceof LlmTransientError && failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
        },
        usage: { promptTokens: 0, completionTokens: 0, estimated: false },
        costUsd: 0,
        latencyMs: Math.round(performance.now() - started),
        queuedMs: Math.round(permit.waitedMs),
        cached: false,
        recordedAt: new Date().toISOString(),
      }).catch(() => undefined);
      throw failure;
    } finally {
      permit.settle(usedTokens);
    }
  }

  /** A batch's answer to a request handed over earlier: recorded, cached and priced as a live answer, at the batch price. */
  private async recordBatchAnswer(delivered: DeliveredBatchAnswer, base: ExchangeBase, opts: { useCache: boolean; llm: LlmSettings; review?: ChatOptions['review'] }): Promise<ChatOutcome> {
    const { model } = base.request;
    if (delivered.cacheKey !== base.cacheKey) {
      throw new LlmPermanentError(`the answer of batch ${delivered.batchId} is for another request than the one asked again (its prompt or settings changed in between)`, undefined);
    }
    const { outcome } = delivered;
    const batch = { batchId: delivered.batchId, customId: outcome.customId };
    const latencyMs = Math.round(delivered.waitedMs);
    if (!outcome.ok) {
      const failure = outcome.error;
      await this.persist({
        ...base,
        response: null,
        error: {
          kind: failure instanceof LlmTransientError ? 'transient' : 'permanent',
          message: failure.message,
          ...(failure.status !== undefined ? { status: failure.status } : {}),
        },
        usage: { promptTokens: 0, completionTokens: 0, estimated: false },
        costUsd: 0,
        latencyMs,
        queuedMs: 0,
        cached: false,
        mode: 'batch',
        batch,
        recordedAt: new Date().toISOString(),
      }).catch(() => undefined);
      throw failure;
    }
    const completion = outcome.completion;
    const { text, finishReason } = completion;
    const promptTokens = completion.usage?.promptTokens ?? estimateMessagesTokens(base.request.messages);
    const completionTokens = completion.usage?.completionTokens ?? estimateTokens(text);
    const cachedPromptTokens = completion.usage?.cachedPromptTokens ?? 0;
    const costUsd = estimateCostUsd(opts.llm.prices, model, promptTokens, completionTokens, 'batch', cachedPromptTokens);
    const exchangeKey = await this.persist({
      ...base,
      response: { text, finishReason, model: completion.model ?? model, ...(completion.id ? { id: completion.id } : {}) },
      usage: { promptTokens, completionTokens, estimated: !completion.usage, ...(cachedPromptTokens ? { cachedPromptTokens } : {}) },
      costUsd,
      latencyMs,
      queuedMs: 0,
      cached: false,
      mode: 'batch',
      batch,
      ...reviewed(opts.review, text, finishReason),
      recordedAt: new Date().toISOString(),
    });
    if (opts.useCache && this.record) await this.store.cachePut(base.cacheKey, exchangeKey);
    return { text, model, promptTokens, completionTokens, cachedPromptTokens, costUsd, cached: false, latencyMs, finishReason, exchangeKey };
  }

  private async fromCache(cacheKey: string, base: ExchangeBase, review?: ChatOptions['review']): Promise<ChatOutcome | undefined> {
    const started = performance.now();
    const cachedKey = await this.store.cacheGet(cacheKey);
    if (!cachedKey || !(await this.store.has(cachedKey))) return undefined;
    const source = await this.store.getJson<ExchangeRecord>(cachedKey);
    if (!source.response) return undefined;
    const latencyMs = Math.round(performance.now() - started);
    const { text, finishReason } = source.response;
    const exchangeKey = await this.persist({
      ...base,
      response: source.response,
      usage: { promptTokens: 0, completionTokens: 0, estimated: false },
      costUsd: 0,
      latencyMs,
      queuedMs: 0,
      cached: true,
      sourceExchangeKey: cachedKey,
      ...reviewed(review, text, finishReason),
      recordedAt: new Date().toISOString(),
    });
    return { text, model: base.request.model, promptTokens: 0, completionTokens: 0, costUsd: 0, cached: true, latencyMs, finishReason, exchangeKey };
  }

  private async persist(record: ExchangeRecord): Promise<string> {
    if (!this.record) return '';
    const exchangeKey = await this.store.putJson(record);
    await this.store.appendExchange({
      exchangeKey,
      step: record.step,
      model: record.request.model,
      cached: record.cached,
      ...(record.mode ? { mode: record.mode } : {}),
      promptTokens: record.usage.promptTokens,
      completionTokens: record.usage.completionTokens,
      ...(record.usage.cachedPromptTokens ? { cachedPromptTokens: record.usage.cachedPromptTokens } : {}),
      costUsd: record.costUsd,
      latencyMs: record.latencyMs,
      functionId: record.functionId,
      ...(record.runId !== undefined ? { runId: record.runId } : {}),
      ...(record.repoId !== undefined ? { repoId: record.repoId } : {}),
      ...(record.promptId !== undefined ? { promptId: record.promptId } : {}),
      ...(record.promptVersion !== undefined ? { promptVersion: record.promptVersion } : {}),
      attempt: record.attempt,
      finishReason: record.response?.finishReason ?? null,
      ...(record.error ? { error: record.error.message } : {}),
      ...(record.refusedBy ? { refusedBy: record.refusedBy } : {}),
      recordedAt: record.recordedAt,
    });
    return exchangeKey;
  }
}
