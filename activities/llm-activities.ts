/**
 * LLM activities (task queue `llm`): one prompt, one answer, parsed and sanity-checked. Each
 * step's prompt and sanity check are its target kind's (activities/targets: a function's, a class's).
 * An unusable answer (no code block, truncated, failed sanity check) is a value the workflow
 * counts and regenerates; transport faults become retryable or non-retryable activity failures.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { CompleteAsyncError, Context } from '@temporalio/activity';
import type { Config } from '../temporal.config';
import type { FunctionRef, LlmStepResult, PreparedFunction, PreviousAnswer, RunRef, VerdictResult } from './contracts';
import {
  DEFAULT_SANDBOX_CACHE_DIR,
  type ExchangeRecord,
  renderPrompt,
  type ChatOutcome,
  type LlmGateway,
  type LlmStep,
  type VerdictAnswer,
} from './llm';
import { BatchCollector, type PendingRequest } from './llm/batch/collector';
import { LlmPermanentError } from './llm/errors';
import { toActivityFailure } from './llm/failures';
import { modeForStep, type BatchCall, type DeliveredBatchAnswer } from './llm/gateway';
import { FOLLOW_UP_VERSION, followUpMessages } from './llm/prompts';
import { reviewCode, reviewVerdict, type CodeReview, type ReviewedAnswer, type VerdictReview } from './llm/review';
import { activityHooks, RunConfigs, whileHeartbeating } from './run-context';
import type { Store } from './store/types';
import { parseInstallCommands } from './sandbox/install-commands';
import { errorMessageOf } from './sandbox/result-text';
import type { SandboxResult } from './sandbox/schema';
import { kindOf, type PromptRequest } from './targets';
import type { LlmActivities } from './types';

/**
 * The directory scripts are told to write files to: RepoST's `/home/user/tmp`, a tmpfs in the
 * sandbox that is emptied between runs.
 */
const SANDBOX_CACHE_DIR = DEFAULT_SANDBOX_CACHE_DIR;

export interface LlmDependencies {
  config: Config;
  store: Store;
  gateway: LlmGateway;
  /** Batch mode's hand-over to the process's collector (activities/llm/batch/collector.ts); without it a step in batch mode fails. */
  handOver?: BatchCollector['enqueue'];
}

/** The activity being run and its input (what a batch answer is delivered to, by running it again). */
const currentCall = new AsyncLocalStorage<{ input: unknown }>();
/** A batch answer being delivered: the activity runs again with it in hand. */
const delivery = new AsyncLocalStorage<DeliveredBatchAnswer>();

/**
 * Delivers a batch's answer to the request that asked it: runs the request's activity again, in
 * this process, with the answer in hand, so it is parsed, checked, recorded, cached and priced as
 * a live answer is; the activity's result (or failure) is what completes the waiting attempt.
 */
export function deliverBatchAnswer(activities: LlmActivities, pending: PendingRequest, answer: DeliveredBatchAnswer): Promise<unknown> {
  const name = pending.activityType;
  if (!Object.prototype.hasOwnProperty.call(activities, name)) return Promise.reject(new Error(`a batch answer for ${name}, which is no LLM activity of this worker`));
  const activity = (activities as unknown as Record<string, (input: unknown) => Promise<unknown>>)[name]!;
  return delivery.run(answer, () => activity(pending.input));
}

export function createLlmActivities({ config, store, gateway, handOver }: LlmDependencies): LlmActivities {
  const runs = new RunConfigs(config, store);

  /** How a step in batch mode asks: with the answer being delivered, or by handing its request over and waiting. */
  function batchCall(): BatchCall {
    const delivered = delivery.getStore();
    return {
      ...(delivered ? { delivered } : {}),
      async handOver(request) {
        if (!handOver) throw new LlmPermanentError('this step is in batch mode (llm.mode), but this process has no batch collector', undefined);
        const info = Context.current().info;
        const call = currentCall.getStore();
        if (!call) throw new Error(`${info.activityType}: batch mode needs the activity's input`);
        await handOver({
          taskToken: Buffer.from(info.taskToken).toString('base64'),
          activityType: info.activityType,
          input: call.input,
          cacheKey: request.cacheKey,
          step: request.step,
          functionId: request.functionId,
          ...(request.runId !== undefined ? { runId: request.runId } : {}),
          line: BatchCollector.lineOf(request.call),
        });
        // The attempt now waits on the Temporal server; the collector completes it by its token.
        throw new CompleteAsyncError();
      },
    };
  }

  /** The run's answer to the previous attempt, when that one could not be used. */
  async function previousText(previous: PreviousAnswer | undefined): Promise<string | null> {
    if (!previous) return null;
    const exchange = await store.getJson<ExchangeRecord>(previous.exchangeKey);
    return exchange.response?.text ?? null;
  }

  /**
   * Asks the model and reviews its answer with `review` (which the run's settings parameterise);
   * the gateway records on the exchange which checks refused it, so a run can show what its
   * refused answers cost.
   */
  async function ask<R extends { refusedBy: string[] }>(
    { kind, vars }: PromptRequest,
    ctx: { run: RunRef; fn: FunctionRef; attempt?: number; previous?: PreviousAnswer },
    review: (answer: ReviewedAnswer, runConfig: Config) => R,
  ): Promise<{ answer: ChatOutcome; promptVersion: string; review: R }> {
    const runConfig = await runs.forRun(ctx.run);
    let reviewed: R | undefined;
    const reviewOnce = (a: ReviewedAnswer) => (reviewed = review(a, runConfig)).refusedBy;
    const prompt = renderPrompt(kind, vars as never);
    await runs.checkPromptVersion(ctx.run, kind, prompt.promptVersion);
    const before = await previousText(ctx.previous);
    const messages = before !== null && ctx.previous ? followUpMessages(prompt, before, ctx.previous.failure, ctx.previous.detail) : prompt.messages;
    const version = `${prompt.promptId}@${prompt.promptVersion}${before !== null ? `+follow-up@${FOLLOW_UP_VERSION}` : ''}`;
    const batch = modeForStep(runConfig.llm, kind as LlmStep) === 'batch' ? batchCall() : undefined;
    try {
      // The call may wait long on the model: the activity heartbeats meanwhile.
      const answer = await whileHeartbeating(() =>
        gateway.chat(
          {
            step: kind as LlmStep,
            functionId: ctx.fn.functionId,
            runId: ctx.run.runId,
            repoId: ctx.fn.repoId,
            messages,
            promptId: prompt.promptId,
            promptVersion: prompt.promptVersion,
            attempt: ctx.attempt ?? 0,
          },
          { signal: activityHooks().signal, llm: runConfig.llm, review: reviewOnce, ...(batch ? { batch } : {}) },
        ),
      );
      return { answer, promptVersion: version, review: reviewed ?? review(answer, runConfig) };
    } catch (err) {
      throw toActivityFailure(err);
    }
  }

  const tokensOf = (a: ChatOutcome) => a.promptTokens + a.completionTokens;

  /** Stores a reviewed code answer's script, or says why it cannot be used. */
  async function codeStep(answer: ChatOutcome, promptVersion: string, review: CodeReview): Promise<LlmStepResult> {
    const tokens = tokensOf(answer);
    if (!review.ok) return { ok: false, failure: review.failure, detail: review.detail, exchangeKey: answer.exchangeKey, tokens };
    const installs = review.bash ? parseInstallCommands(review.bash).ok : [];
    return { ok: true, scriptKey: await store.put(review.code), exchangeKey: answer.exchangeKey, promptVersion, tokens, installs };
  }

  function verdictStep(answer: ChatOutcome, promptVersion: string, v: VerdictReview): VerdictResult {
    const tokens = tokensOf(answer);
    if (!v.ok) return { ok: false, failure: `parse_${v.failure}`, detail: v.detail, tokens };
    return { ok: true, answer: v.answer, reasoning: v.reasoning.slice(0, 1000), promptVersion, tokens };
  }

  const verdictReview = (allowed: readonly VerdictAnswer[]) => (a: ReviewedAnswer) => reviewVerdict(a, allowed);

  /** The sanity check of a script with tests, as the target's kind makes it. */
  const testScriptCheck = (fn: FunctionRef, prepared: PreparedFunction, original: string, sandboxScript: string, config: Config) =>
    kindOf(fn).testCheck({ fn, prepared, original, config }, sandboxScript);

  const activities: LlmActivities = {
    async generateSandboxScript({ run, fn, prepared, attempt, previous }) {
      const context = await store.get(prepared.contextKey);
      const original = await store.get(prepared.sourceKey);
      const kind = kindOf(fn);
      const prompt = kind.sandboxPrompt(fn, prepared, { functionName: fn.qualname, filePath: fn.path, context, cacheDir: SANDBOX_CACHE_DIR });
      const { answer, promptVersion, review } = await ask(prompt, { run, fn, attempt, previous }, (a, config) =>
        reviewCode(a, kind.sandboxCheck({ fn, prepared, original, config }, context)),
      );
      return codeStep(answer, promptVersion, review);
    },

    async generateTests({ run, fn, prepared, sandboxScriptKey, attempt, previous }) {
      const sandboxScript = await store.get(sandboxScriptKey);
      const original = await store.get(prepared.sourceKey);
      const prompt = kindOf(fn).testsPrompt({ functionName: fn.qualname, script: sandboxScript, cacheDir: SANDBOX_CACHE_DIR });
      const { answer, promptVersion, review } = await ask(prompt, { run, fn, attempt, previous }, (a, c) => reviewCode(a, testScriptCheck(fn, prepared, original, sandboxScript, c)));
      return codeStep(answer, promptVersion, review);
    },

    async debugScript({ run, fn, prepared, scriptKey, resultKey, round, previous }) {
      const script = await store.get(scriptKey);
      const result = await store.getJson<SandboxResult>(resultKey);
      const original = await store.get(prepared.sourceKey);
      const prompt = kindOf(fn).debugPrompt({ functionName: fn.qualname, script, errorMessage: errorMessageOf(result), cacheDir: SANDBOX_CACHE_DIR });
      const { answer, promptVersion, review } = await ask(prompt, { run, fn, attempt: round, previous }, (a, c) => reviewCode(a, testScriptCheck(fn, prepared, original, '', c)));
      return codeStep(answer, promptVersion, review);
    },

    async improveCoverage({ run, fn, prepared, scriptKey, resultKey, round, previous }) {
      const script = await store.get(scriptKey);
      const result = await store.getJson<SandboxResult>(resultKey);
      const original = await store.get(prepared.sourceKey);
      const cov = result.coverage;
      const vars = {
        functionName: fn.qualname,
        script,
        missingLines: cov?.missingLines.join(', ') || '(none)',
        missingBranches: cov?.missingBranches.map((b) => b.text).join(', ') || '(none)',
        coverage: cov?.rate ?? 0,
        cacheDir: SANDBOX_CACHE_DIR,
      };
      const { answer, promptVersion, review } = await ask(kindOf(fn).coveragePrompt(vars, cov), { run, fn, attempt: round, previous }, (a, c) =>
        reviewCode(a, testScriptCheck(fn, prepared, original, script, c)),
      );
      return codeStep(answer, promptVersion, review);
    },

    async killMutants({ run, fn, prepared, scriptKey, survivorsKey, score, round, previous }) {
      const script = await store.get(scriptKey);
      const survivors = await store.get(survivorsKey);
      const original = await store.get(prepared.sourceKey);
      const { answer, promptVersion, review } = await ask(
        { kind: 'mutation', vars: { functionName: fn.qualname, script, survivors, score, cacheDir: SANDBOX_CACHE_DIR } },
        { run, fn, attempt: round, previous },
        (a, c) => reviewCode(a, testScriptCheck(fn, prepared, original, script, c)),
      );
      return codeStep(answer, promptVersion, review);
    },

    async checkFunctionality({ run, fn, prepared, scriptKey }) {
      const script = await store.get(scriptKey);
      const original = await store.get(prepared.sourceKey);
      const asked = await ask(kindOf(fn).checkFunctionalityPrompt(fn, original, script), { run, fn }, verdictReview(['same', 'yes', 'no']));
      return verdictStep(asked.answer, asked.promptVersion, asked.review);
    },

    async checkTests({ run, fn, scriptKey }) {
      const script = await store.get(scriptKey);
      const { answer, promptVersion, review } = await ask(kindOf(fn).checkTestsPrompt({ functionName: fn.qualname, script }), { run, fn }, verdictReview(['yes', 'no']));
      return verdictStep(answer, promptVersion, review);
    },
  };
  // Each activity runs with its input at hand, for a hand-over in batch mode.
  const withInput = Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [name, (input: unknown) => currentCall.run({ input }, () => (fn as (i: unknown) => Promise<unknown>)(input))]),
  );
  return withInput as unknown as LlmActivities;
}
