/**
 * LLM activities (task queue `llm`): one prompt, one answer, parsed and sanity-checked.
 * An unusable answer (no code block, truncated, failed sanity check) is a value the workflow
 * counts and regenerates; transport faults become retryable or non-retryable activity failures.
 */
import type { Config } from '../temporal.config';
import type { FunctionRef, LlmStepResult, PreparedFunction, PreviousAnswer, RunRef, VerdictResult } from './contracts';
import { definitionSource } from './dataset/script-parts';
import {
  DEFAULT_SANDBOX_CACHE_DIR,
  type ExchangeRecord,
  renderPrompt,
  type ChatOutcome,
  type LlmGateway,
  type LlmStep,
  type PromptKind,
  type PromptVars,
  type VerdictAnswer,
} from './llm';
import { toActivityFailure } from './llm/failures';
import { FOLLOW_UP_VERSION, followUpMessages } from './llm/prompts';
import { reviewCode, reviewVerdict, type CodeReview, type ReviewedAnswer, type VerdictReview } from './llm/review';
import { activityHooks, RunConfigs, whileHeartbeating } from './run-context';
import type { Store } from './store/types';
import { checkSandboxScript, checkTestScript } from './llm/sanity';
import { parseInstallCommands } from './sandbox/install-commands';
import { errorMessageOf } from './sandbox/result-text';
import type { SandboxResult } from './sandbox/schema';
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
}

export function createLlmActivities({ config, store, gateway }: LlmDependencies): LlmActivities {
  const runs = new RunConfigs(config, store);

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
  async function ask<K extends PromptKind, R extends { refusedBy: string[] }>(
    kind: K,
    vars: PromptVars[K],
    ctx: { run: RunRef; fn: FunctionRef; attempt?: number; previous?: PreviousAnswer },
    review: (answer: ReviewedAnswer, runConfig: Config) => R,
  ): Promise<{ answer: ChatOutcome; promptVersion: string; review: R }> {
    const runConfig = await runs.forRun(ctx.run);
    let reviewed: R | undefined;
    const reviewOnce = (a: ReviewedAnswer) => (reviewed = review(a, runConfig)).refusedBy;
    const prompt = renderPrompt(kind, vars);
    await runs.checkPromptVersion(ctx.run, kind, prompt.promptVersion);
    const before = await previousText(ctx.previous);
    const messages = before !== null && ctx.previous ? followUpMessages(prompt, before, ctx.previous.failure, ctx.previous.detail) : prompt.messages;
    const version = `${prompt.promptId}@${prompt.promptVersion}${before !== null ? `+follow-up@${FOLLOW_UP_VERSION}` : ''}`;
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
          { signal: activityHooks().signal, llm: runConfig.llm, review: reviewOnce },
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

  const original = (p: PreparedFunction) => store.get(p.sourceKey);

  return {
    async generateSandboxScript({ run, fn, prepared, attempt, previous }) {
      const context = await store.get(prepared.contextKey);
      const kind = prepared.crossFile ? 'aggregate' : 'sandbox';
      const originalFunction = await original(prepared);
      const { answer, promptVersion, review } = await ask(kind, { functionName: fn.qualname, filePath: fn.path, context, cacheDir: SANDBOX_CACHE_DIR }, { run, fn, attempt, previous }, (a) =>
        reviewCode(a, (script) => checkSandboxScript({ functionName: fn.qualname, originalFunction, script, context })),
      );
      return codeStep(answer, promptVersion, review);
    },

    async generateTests({ run, fn, prepared, sandboxScriptKey, attempt, previous }) {
      const sandboxScript = await store.get(sandboxScriptKey);
      const originalFunction = await original(prepared);
      const { answer, promptVersion, review } = await ask('tests', { functionName: fn.qualname, script: sandboxScript, cacheDir: SANDBOX_CACHE_DIR }, { run, fn, attempt, previous }, (a, c) =>
        reviewCode(a, (script) => checkTestScript({ functionName: fn.qualname, originalFunction, script, sandboxScript, testCalls: c.loops.sanity.testCalls })),
      );
      return codeStep(answer, promptVersion, review);
    },

    async debugScript({ run, fn, prepared, scriptKey, resultKey, round, previous }) {
      const script = await store.get(scriptKey);
      const result = await store.getJson<SandboxResult>(resultKey);
      const originalFunction = await original(prepared);
      const { answer, promptVersion, review } = await ask(
        'debug',
        { functionName: fn.qualname, script, errorMessage: errorMessageOf(result), cacheDir: SANDBOX_CACHE_DIR },
        { run, fn, attempt: round, previous },
        (a, c) => reviewCode(a, (next) => checkTestScript({ functionName: fn.qualname, originalFunction, script: next, sandboxScript: '', testCalls: c.loops.sanity.testCalls })),
      );
      return codeStep(answer, promptVersion, review);
    },

    async improveCoverage({ run, fn, prepared, scriptKey, resultKey, round, previous }) {
      const script = await store.get(scriptKey);
      const result = await store.getJson<SandboxResult>(resultKey);
      const cov = result.coverage;
      const originalFunction = await original(prepared);
      const { answer, promptVersion, review } = await ask(
        'coverage',
        {
          functionName: fn.qualname,
          script,
          missingLines: cov?.missingLines.join(', ') || '(none)',
          missingBranches: cov?.missingBranches.map((b) => b.text).join(', ') || '(none)',
          coverage: cov?.rate ?? 0,
          cacheDir: SANDBOX_CACHE_DIR,
        },
        { run, fn, attempt: round, previous },
        (a, c) => reviewCode(a, (next) => checkTestScript({ functionName: fn.qualname, originalFunction, script: next, sandboxScript: script, testCalls: c.loops.sanity.testCalls })),
      );
      return codeStep(answer, promptVersion, review);
    },

    async checkFunctionality({ run, fn, prepared, scriptKey }) {
      const script = await store.get(scriptKey);
      const sandboxedFunction = definitionSource(script, fn.qualname) ?? script;
      const { answer, promptVersion, review } = await ask(
        'check_functionality',
        { originalFunction: await original(prepared), sandboxedFunction, functionName: fn.name },
        { run, fn },
        verdictReview(['same', 'yes', 'no']),
      );
      return verdictStep(answer, promptVersion, review);
    },

    async checkTests({ run, fn, scriptKey }) {
      const script = await store.get(scriptKey);
      const { answer, promptVersion, review } = await ask('check_tests', { functionName: fn.qualname, script }, { run, fn }, verdictReview(['yes', 'no']));
      return verdictStep(answer, promptVersion, review);
    },
  };
}
