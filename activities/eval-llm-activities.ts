/**
 * The evaluation's LLM activities (task queue `llm`): the solve prompt (with a docstring written
 * when the target has none), samples, repairs, candidate tests, augmentation inputs, and the
 * judgement of a failing assertion. Every call goes through the gateway with the run's frozen LLM
 * settings and prompt versions, heartbeating while it waits; everything it keeps goes to the store.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { RunRef } from './contracts';
import { parseInputCases, scriptWithoutTests } from './eval/augmentation';
import { extractCandidate, type Candidate } from './eval/candidate';
import { testSourceOf } from './eval/assertions';
import { splitCandidateTests } from './eval/candidate-tests';
import type { AssertionVerdict, CandidateRef, EvalItem, PreparedPrompt, FailingAssertion } from './eval/contracts';
import type { StoredCandidate } from './eval/finalize';
import { hasDocstring, promptContext } from './eval/prompt-context';
import { EVAL_LIMITS } from './eval/settings';
import { parseDocstringAnswer, parseVerdict, renderPrompt, type ChatOutcome, type LlmGateway, type RenderedPrompt } from './llm';
import { toActivityFailure } from './llm/failures';
import { activityHooks, whileHeartbeating } from './run-context';
import { EvalRunConfigs, recordOf, type EvalDependencies } from './eval-run-context';
import { errorMessageOf, type SandboxResult } from './sandbox';
import { addUsage, callUsage, emptyUsage, type Usage } from './store/usage';

export interface EvalLlmActivities {
  /** `spent`: usage of earlier attempts, carried into the result so a regeneration's tokens are counted. */
  prepareEvalPrompt(input: { run: RunRef; item: EvalItem; attempt: number; spent: Usage | null }): Promise<{ ok: true; prompt: PreparedPrompt } | { ok: false; reason: string; usage: Usage }>;
  sampleCandidate(input: { run: RunRef; item: EvalItem; promptKey: string; sample: number }): Promise<CandidateRef>;
  repairCandidate(input: {
    run: RunRef;
    item: EvalItem;
    contextKey: string;
    candidateKey: string | null;
    /** The failed run's result, or the reason the answer held no code. */
    resultKey: string | null;
    failure: string;
    round: number;
    sample: number;
  }): Promise<CandidateRef>;
  generateCandidateTests(input: { run: RunRef; item: EvalItem; contextKey: string; attempt: number }): Promise<{ testsKey: string; count: number; usage: Usage }>;
  proposeTestInputs(input: { run: RunRef; item: EvalItem; attempt: number }): Promise<{ casesKey: string; count: number; usage: Usage }>;
  /** Whether the prompt (`contextKey`: what the solve prompt showed) determines what a failing assertion checks. */
  judgeAssertion(input: { run: RunRef; item: EvalItem; contextKey: string; assertion: FailingAssertion }): Promise<AssertionVerdict>;
}

export function createEvalLlmActivities({ config, store, gateway }: EvalDependencies & { gateway: LlmGateway }): EvalLlmActivities {
  const runs = new EvalRunConfigs(config, store);

  /** One call with the run's LLM settings; the prompt's version must be the run's. */
  async function ask(prompt: RenderedPrompt, ctx: { run: RunRef; item: EvalItem; attempt: number; model?: string; temperature?: number }): Promise<ChatOutcome> {
    const { config: runConfig } = await runs.forEvalRun(ctx.run);
    await runs.checkPromptVersion(ctx.run, prompt.step, prompt.promptVersion);
    try {
      // The call may wait long on the model: the activity heartbeats meanwhile.
      return await whileHeartbeating(() =>
        gateway.chat(
          {
            step: prompt.step,
            functionId: ctx.item.functionId,
            runId: ctx.run.runId,
            repoId: ctx.item.repo,
            messages: prompt.messages,
            promptId: prompt.promptId,
            promptVersion: prompt.promptVersion,
            attempt: ctx.attempt,
            ...(ctx.model ? { model: ctx.model } : {}),
            ...(ctx.temperature !== undefined ? { temperature: ctx.temperature } : {}),
          },
          { signal: activityHooks().signal, llm: runConfig.llm },
        ),
      );
    } catch (err) {
      throw toActivityFailure(err);
    }
  }

  async function candidateRef(answer: ChatOutcome, target: { qualname: string; origFunc: string }): Promise<CandidateRef> {
    const candidate: Candidate = extractCandidate(answer.text, target);
    const usage = callUsage(answer);
    if (!candidate.ok) return { candidateKey: null, noCode: candidate.detail, exchangeKey: answer.exchangeKey, usage };
    const stored: StoredCandidate = { code: candidate.code, preamble: candidate.preamble, bare: candidate.bare };
    return { candidateKey: await store.putJson(stored), noCode: null, exchangeKey: answer.exchangeKey, usage };
  }

  return {
    async prepareEvalPrompt({ run, item, attempt, spent }) {
      const { settings } = await runs.forEvalRun(run);
      const record = await recordOf(store, item);
      const hasOriginal = hasDocstring(record.origFunc);
      // Without a docstring of its own, a target shows the description its record carries, or
      // (`missingDocstring: generate`) one written now, as the `generated` mode writes them.
      let mode = settings.docstring;
      let generated: string | undefined;
      if (mode === 'original' && !hasOriginal) {
        if (record.generatedDocstring) {
          mode = 'generated';
          generated = record.generatedDocstring;
        } else if (settings.missingDocstring === 'generate') mode = 'generated';
      }
      let usage = spent ?? emptyUsage();
      if (mode === 'generated' && generated === undefined) {
        // Docstrings are written once per function: at temperature 0 the cache answers re-runs.
        const answer = await ask(renderPrompt('docstring', { functionName: record.qualname, code: record.origFunc }), { run, item, attempt, model: settings.docstringModel, temperature: 0 });
        usage = addUsage(usage, callUsage(answer));
        const parsed = parseDocstringAnswer(answer.text, answer.finishReason);
        if (!parsed.ok) return { ok: false, reason: `docstring ${parsed.failure}: ${parsed.detail}`, usage };
        generated = parsed.docstring;
      }
      let context: string;
      try {
        context = promptContext(record, { mode, generated });
      } catch (err) {
        // The record itself is the problem: asking again cannot help.
        throw ApplicationFailure.nonRetryable(`cannot build the prompt from the record: ${(err as Error).message}`, 'EvalPromptUnbuildable');
      }
      const rendered = renderPrompt('solve', { functionName: record.qualname, context });
      await runs.checkPromptVersion(run, 'solve', rendered.promptVersion);
      return {
        ok: true,
        prompt: {
          promptKey: await store.putJson(rendered),
          contextKey: await store.put(context),
          docstring: mode === 'original' && !hasOriginal ? 'missing' : mode,
          hasOriginalDocstring: hasOriginal,
          docstringKey: mode === 'generated' && generated !== undefined ? await store.put(generated) : null,
          promptVersion: rendered.promptVersion,
          usage,
        },
      };
    },

    async sampleCandidate({ run, item, promptKey, sample }) {
      const { settings } = await runs.forEvalRun(run);
      const record = await recordOf(store, item);
      const prompt = await store.getJson<RenderedPrompt>(promptKey);
      // The sample index is the request's attempt: samples differ, a re-run of one is cached.
      const answer = await ask(prompt, { run, item, attempt: sample, model: settings.model, temperature: settings.temperature });
      return candidateRef(answer, record);
    },

    async repairCandidate({ run, item, contextKey, candidateKey, resultKey, failure, round, sample }) {
      const { settings } = await runs.forEvalRun(run);
      const record = await recordOf(store, item);
      const context = await store.get(contextKey);
      const candidate = candidateKey ? (await store.getJson<StoredCandidate>(candidateKey)).code : '# (the previous answer held no usable code)';
      const errorMessage = resultKey ? errorMessageOf(await store.getJson<SandboxResult>(resultKey)) : failure;
      const answer = await ask(renderPrompt('repair', { functionName: record.qualname, context, candidate, errorMessage }), {
        run,
        item,
        // One attempt number per (sample, round): a repeated prompt in a later round still asks anew.
        attempt: sample * (EVAL_LIMITS.maxRepairRounds + 1) + round,
        model: settings.model,
        temperature: settings.temperature,
      });
      return candidateRef(answer, record);
    },

    async generateCandidateTests({ run, item, contextKey, attempt }) {
      const { settings } = await runs.forEvalRun(run);
      const record = await recordOf(store, item);
      const answer = await ask(renderPrompt('candidate_tests', { functionName: record.qualname, context: await store.get(contextKey) }), { run, item, attempt, model: settings.model, temperature: settings.temperature });
      const tests = splitCandidateTests(answer.text, record.qualname);
      return { testsKey: await store.putJson(tests), count: tests.length, usage: callUsage(answer) };
    },

    async proposeTestInputs({ run, item, attempt }) {
      const { settings } = await runs.forEvalRun(run);
      const record = await recordOf(store, item);
      const answer = await ask(renderPrompt('test_inputs', { functionName: record.qualname, script: scriptWithoutTests(record.evalScript) }), { run, item, attempt, model: settings.model, temperature: settings.temperature });
      const cases = parseInputCases(answer.text);
      return { casesKey: await store.putJson(cases), count: cases.length, usage: callUsage(answer) };
    },

    async judgeAssertion({ run, item, contextKey, assertion }) {
      const record = await recordOf(store, item);
      const prompt = renderPrompt('check_assertion', {
        functionName: record.qualname,
        context: await store.get(contextKey),
        testSource: testSourceOf(record.evalScript, assertion.line),
        assertion: assertion.text,
        failures: assertion.failures.map((f) => `- ${f}`).join('\n') || '- (no message)',
      });
      // One verdict per assertion and failures, at temperature 0 with the step's (the `check`) model: a re-run is answered from the cache.
      const answer = await ask(prompt, { run, item, attempt: 0, temperature: 0 });
      const usage = callUsage(answer);
      const v = parseVerdict(answer.text, ['yes', 'no'], answer.finishReason);
      if (!v.ok) return { ok: false, reason: `judge ${v.failure}: ${v.detail}`, usage };
      return { ok: true, determined: v.answer === 'yes', reasoning: v.reasoning.slice(0, 1000), promptVersion: `${prompt.promptId}@${prompt.promptVersion}`, usage };
    },
  };
}
