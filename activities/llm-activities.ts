/**
 * LLM activities (task queue `llm`): one prompt, one answer, parsed and sanity-checked. A class
 * target (`fn.kind === 'class'`) takes the class variant of each step's prompt and sanity check.
 * An unusable answer (no code block, truncated, failed sanity check) is a value the workflow
 * counts and regenerates; transport faults become retryable or non-retryable activity failures.
 */
import type { Config } from '../temporal.config';
import type { FunctionRef, LlmStepResult, PreparedFunction, PreviousAnswer, RunRef, VerdictResult } from './contracts';
import { classDefinitionSource, definitionSource } from './dataset/script-parts';
import {
  DEFAULT_SANDBOX_CACHE_DIR,
  type ExchangeRecord,
  parseCodeAnswer,
  parseVerdict,
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
import { activityHooks, RunConfigs, whileHeartbeating } from './run-context';
import type { Store } from './store/types';
import { checkClassSandboxScript, checkClassTestScript, checkSandboxScript, checkTestScript } from './llm/sanity';
import type { CoverageReport } from './sandbox/schema';
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

  async function ask<K extends PromptKind>(
    kind: K,
    vars: PromptVars[K],
    ctx: { run: RunRef; fn: FunctionRef; attempt?: number; previous?: PreviousAnswer },
  ): Promise<{ answer: ChatOutcome; promptVersion: string }> {
    const runConfig = await runs.forRun(ctx.run);
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
          { signal: activityHooks().signal, llm: runConfig.llm },
        ),
      );
      return { answer, promptVersion: version };
    } catch (err) {
      throw toActivityFailure(err);
    }
  }

  const tokensOf = (a: ChatOutcome) => a.promptTokens + a.completionTokens;

  /** Parses a code answer; runs the step's sanity check; stores the script. */
  async function codeStep(
    answer: ChatOutcome,
    promptVersion: string,
    check: (script: string) => { passed: boolean; failures: { check: string; detail: string }[] } | null,
  ): Promise<LlmStepResult> {
    const parsed = parseCodeAnswer(answer.text, answer.finishReason);
    const tokens = tokensOf(answer);
    if (!parsed.ok) return { ok: false, failure: `parse_${parsed.failure}`, detail: parsed.detail, exchangeKey: answer.exchangeKey, tokens };
    const report = check(parsed.code);
    if (report && !report.passed) {
      const detail = report.failures.map((f) => `${f.check}: ${f.detail}`).join('; ');
      return { ok: false, failure: 'sanity_check', detail, exchangeKey: answer.exchangeKey, tokens };
    }
    const installs = parsed.bash ? parseInstallCommands(parsed.bash).ok : [];
    return { ok: true, scriptKey: await store.put(parsed.code), exchangeKey: answer.exchangeKey, promptVersion, tokens, installs };
  }

  async function verdictStep(answer: ChatOutcome, promptVersion: string, allowed: readonly VerdictAnswer[]): Promise<VerdictResult> {
    const v = parseVerdict(answer.text, allowed, answer.finishReason);
    const tokens = tokensOf(answer);
    if (!v.ok) return { ok: false, failure: `parse_${v.failure}`, detail: v.detail, tokens };
    return { ok: true, answer: v.answer, reasoning: v.reasoning.slice(0, 1000), promptVersion, tokens };
  }

  /** A class target's checks: the class kept whole (a token allowance per method). */
  const classInput = (fn: FunctionRef, prepared: PreparedFunction, originalClass: string) => ({ className: fn.qualname, originalClass, methods: prepared.methods?.length ?? 1 });

  /** A class's coverage per method, one line each, for its coverage round. */
  const methodLines = (cov: CoverageReport | null) =>
    cov?.methods?.length ? cov.methods.map((m) => `- ${m.name}: ${Math.round(m.rate * 1000) / 10}% (${m.hasBranches ? `${m.branches.taken}/${m.branches.total} branch arcs` : `${m.lines.covered}/${m.lines.total} lines`})`).join('\n') : '(no method reached)';

  return {
    async generateSandboxScript({ run, fn, prepared, attempt, previous }) {
      const context = await store.get(prepared.contextKey);
      const vars = { functionName: fn.qualname, filePath: fn.path, context, cacheDir: SANDBOX_CACHE_DIR };
      const original = await store.get(prepared.sourceKey);
      if (fn.kind === 'class') {
        const { answer, promptVersion } = await ask('class_sandbox', vars, { run, fn, attempt, previous });
        return codeStep(answer, promptVersion, (script) => checkClassSandboxScript({ ...classInput(fn, prepared, original), script, context }));
      }
      const kind = prepared.crossFile ? 'aggregate' : 'sandbox';
      const { answer, promptVersion } = await ask(kind, vars, { run, fn, attempt, previous });
      return codeStep(answer, promptVersion, (script) => checkSandboxScript({ functionName: fn.qualname, originalFunction: original, script, context }));
    },

    async generateTests({ run, fn, prepared, sandboxScriptKey, attempt, previous }) {
      const sandboxScript = await store.get(sandboxScriptKey);
      const original = await store.get(prepared.sourceKey);
      const kind = fn.kind === 'class' ? 'class_tests' : 'tests';
      const { answer, promptVersion } = await ask(kind, { functionName: fn.qualname, script: sandboxScript, cacheDir: SANDBOX_CACHE_DIR }, { run, fn, attempt, previous });
      return codeStep(answer, promptVersion, (script) =>
        fn.kind === 'class'
          ? checkClassTestScript({ ...classInput(fn, prepared, original), script, sandboxScript })
          : checkTestScript({ functionName: fn.qualname, originalFunction: original, script, sandboxScript }),
      );
    },

    async debugScript({ run, fn, prepared, scriptKey, resultKey, round, previous }) {
      const script = await store.get(scriptKey);
      const result = await store.getJson<SandboxResult>(resultKey);
      const kind = fn.kind === 'class' ? 'class_debug' : 'debug';
      const { answer, promptVersion } = await ask(kind, { functionName: fn.qualname, script, errorMessage: errorMessageOf(result), cacheDir: SANDBOX_CACHE_DIR }, { run, fn, attempt: round, previous });
      const original = await store.get(prepared.sourceKey);
      return codeStep(answer, promptVersion, (next) =>
        fn.kind === 'class'
          ? checkClassTestScript({ ...classInput(fn, prepared, original), script: next, sandboxScript: '' })
          : checkTestScript({ functionName: fn.qualname, originalFunction: original, script: next, sandboxScript: '' }),
      );
    },

    async improveCoverage({ run, fn, prepared, scriptKey, resultKey, round, previous }) {
      const script = await store.get(scriptKey);
      const result = await store.getJson<SandboxResult>(resultKey);
      const cov = result.coverage;
      const vars = {
        functionName: fn.qualname,
        script,
        missingLines: cov?.missingLines.join(', ') || '(none)',
        missingBranches: cov?.missingBranches.map((b) => b.text).join(', ') || '(none)',
        coverage: cov?.rate ?? 0,
        cacheDir: SANDBOX_CACHE_DIR,
      };
      const { answer, promptVersion } =
        fn.kind === 'class'
          ? await ask('class_coverage', { ...vars, methodCoverage: methodLines(cov) }, { run, fn, attempt: round, previous })
          : await ask('coverage', vars, { run, fn, attempt: round, previous });
      const original = await store.get(prepared.sourceKey);
      return codeStep(answer, promptVersion, (next) =>
        fn.kind === 'class'
          ? checkClassTestScript({ ...classInput(fn, prepared, original), script: next, sandboxScript: script })
          : checkTestScript({ functionName: fn.qualname, originalFunction: original, script: next, sandboxScript: script }),
      );
    },

    async checkFunctionality({ run, fn, prepared, scriptKey }) {
      const script = await store.get(scriptKey);
      const original = await store.get(prepared.sourceKey);
      const { answer, promptVersion } =
        fn.kind === 'class'
          ? await ask('class_check_functionality', { functionName: fn.qualname, originalFunction: original, sandboxedFunction: classDefinitionSource(script, fn.qualname) ?? script }, { run, fn })
          : await ask('check_functionality', { originalFunction: original, sandboxedFunction: definitionSource(script, fn.qualname) ?? script, functionName: fn.name }, { run, fn });
      return verdictStep(answer, promptVersion, ['same', 'yes', 'no']);
    },

    async checkTests({ run, fn, scriptKey }) {
      const script = await store.get(scriptKey);
      const { answer, promptVersion } = await ask(fn.kind === 'class' ? 'class_check_tests' : 'check_tests', { functionName: fn.qualname, script }, { run, fn });
      return verdictStep(answer, promptVersion, ['yes', 'no']);
    },
  };
}
