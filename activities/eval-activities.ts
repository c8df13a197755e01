/**
 * Evaluation activities, thin wrappers over `activities/eval/`: LLM calls on the `llm` queue
 * (prompt, samples, repairs, candidate tests, augmentation inputs), container runs on the
 * `sandbox` queue (a candidate against the hidden tests, a matrix row, training-target
 * normalisation, augmentation runs), bookkeeping on the `io` queue (items, ranking, results, the
 * run's summary). Every activity applies the run's frozen settings (its configuration and its
 * evaluation settings) over this worker's own, and refuses a run of another store; everything it
 * keeps goes to the store (no file is written on a worker's disk). Long activities heartbeat and
 * honour cancellation; an infrastructure fault is thrown as retryable, a candidate's failure is an
 * outcome.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Config } from '../temporal.config';
import type { FunctionRef, PreparedFunction, RunRef } from './contracts';
import { augmentedScript, deterministicCases, parseInputCases, scriptWithoutTests } from './eval/augmentation';
import { extractCandidate, type Candidate } from './eval/candidate';
import { failingAssertion, removeAssertions, testSourceOf, type ScriptAssertion } from './eval/assertions';
import { mergeCandidateTests, splitCandidateTests } from './eval/candidate-tests';
import type {
  AssertionRemoval,
  AssertionVerdict,
  AugmentationResult,
  CandidateRef,
  CandidateRun,
  EvalItem,
  EvalItemIndex,
  EvalRunSummary,
  FunctionEvalResult,
  FunctionEvalSummary,
  PreparedPrompt,
  RankingSummary,
  SolvabilityTask,
  TrainingTargets,
  FailingAssertion,
} from './eval/contracts';
import type { EvalRecord, StoredEvalRecord } from './eval/dataset';
import { recordNames } from './eval/harness';
import { placeCandidateCode, type Placed } from './eval/placement';
import { runPlaced } from './eval/verdict';
import { finalizeEvalRun, writeFunctionResult, type StoredCandidate } from './eval/finalize';
import { outcomeOf } from './eval/outcome';
import { hasDocstring, promptContext } from './eval/prompt-context';
import { rankingSummary } from './eval/ranking-summary';
import { EVAL_LIMITS, effectiveKs, evalSettingsOfRun, type EvalSettings } from './eval/settings';
import { dedupeTargets, sftExamples, type TrainingTarget } from './eval/sft';
import { functionDefinitionSource, survivorSources } from './eval/survivors';
import { matrixRow, runnerRequest, snippetResults, type SnippetResult } from './eval/test-runner';
import { modelForStep, parseDocstringAnswer, parseVerdict, renderPrompt, type ChatOutcome, type LlmGateway, type RenderedPrompt } from './llm';
import { toActivityFailure } from './llm/failures';
import { activityHooks, RunConfigs, whileHeartbeating } from './run-context';
import { dedentLike } from './sandbox/new-implementation';
import { errorMessageOf, isolatedPlacement, runLimitsOf, withNewImplementation, type SandboxExecutor, type SandboxResult } from './sandbox';
import { definitionSource } from './dataset/script-parts';
import type { Store } from './store/types';
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

export interface EvalSandboxActivities {
  runCandidate(input: { run: RunRef; item: EvalItem; candidateKey: string }): Promise<CandidateRun>;
  /** One container run: a candidate (or, with `candidateKey: null`, the ground truth) against every candidate test. */
  runTestMatrix(input: { run: RunRef; item: EvalItem; candidateKey: string | null; testsKey: string }): Promise<{ row: string }>;
  collectTrainingTargets(input: { run: RunRef; item: EvalItem; promptKey: string; passing: { candidateKey: string; sample: number; round: number }[] }): Promise<TrainingTargets>;
  /** The ground truth's values on the input cases (one run; called once per determinism run). */
  runCaseOutputs(input: { run: RunRef; item: EvalItem; casesKey: string; attempt: number }): Promise<{ outputsKey: string }>;
  /** Keeps the deterministic cases, adds the test, and checks the script still passes with the ground truth. */
  augmentScript(input: { run: RunRef; item: EvalItem; casesKey: string; outputsKeys: string[] }): Promise<Omit<AugmentationResult, 'usage'>>;
}

export interface EvalIoActivities {
  /** One page of the run's items (dataset order). */
  loadEvalItems(input: { run: RunRef; itemsKey: string; page: number }): Promise<{ items: EvalItem[]; pages: number }>;
  /** The tests of several answers, deduplicated, with the answers' usage added up. */
  mergeCandidateTests(input: { run: RunRef; answers: { testsKey: string; usage: Usage }[] }): Promise<{ testsKey: string; count: number; usage: Usage }>;
  /** The rankings of a function's scored samples (`samples`: each row's sample number, which `top` names). */
  rankCandidates(input: { run: RunRef; rows: string[]; truthRow: string; hidden: boolean[]; samples: number[] }): Promise<RankingSummary>;
  /** The function's result, into the store; returns the counts its workflow reports. */
  writeEvalFunction(input: { run: RunRef; item: EvalItem; result: FunctionEvalResult }): Promise<FunctionEvalSummary>;
  /** The run's summary from the stored results, kept in the run's manifest. */
  finalizeEval(input: { run: RunRef; itemsKey: string }): Promise<EvalRunSummary>;
  /** A function the crawl is checking as an evaluation task: its record as `dataset.jsonl` would hold it, as an item. */
  solvabilityTask(input: { run: RunRef; fn: FunctionRef; prepared: PreparedFunction; scriptKey: string; packages: { name: string; version: string }[] }): Promise<SolvabilityTask>;
  /** The record's assertions at which failing runs of candidates stopped, and how many failing runs stopped at none. */
  failingAssertions(input: { run: RunRef; item: EvalItem; runs: { candidateKey: string; resultKey: string; summary: string }[] }): Promise<{ assertions: FailingAssertion[]; unattributed: number }>;
  /** The item with some of its script's assertions removed (the new script stored), or why that would leave no valid test. */
  removeAssertions(input: { run: RunRef; item: EvalItem; assertions: ScriptAssertion[] }): Promise<AssertionRemoval>;
}

const recordOf = async (store: Store, item: EvalItem) => (await store.getJson<StoredEvalRecord>(item.recordKey)).record;

/**
 * What an evaluation activity works with: this worker's configuration with the run's frozen
 * settings laid over it (after checking the run lives in this worker's store), and the run's
 * frozen evaluation settings.
 */
export class EvalRunConfigs extends RunConfigs {
  /** Parsed once per stored settings artifact, which the base class keeps while the run is in use. */
  private readonly parsed = new WeakMap<object, EvalSettings>();

  /** The evaluation's own part of the run's frozen settings, with this worker's configuration under the run's. */
  async forEvalRun(run: RunRef): Promise<{ config: Config; settings: EvalSettings }> {
    const config = await this.forRun(run);
    const stored = (await this.storedSettings(run)) as object;
    let settings = this.parsed.get(stored);
    if (!settings) {
      // A crawl's evaluation settings are its solvability stage's.
      settings = evalSettingsOfRun(stored, run.runId, config);
      this.parsed.set(stored, settings);
    }
    return { config, settings };
  }
}

export interface EvalDependencies {
  config: Config;
  store: Store;
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

/** `placeCandidateCode` (eval/placement.ts) for a candidate in the store (`candidateKey: null`: the ground truth). */
async function placeCandidate(store: Store, record: EvalRecord, candidateKey: string | null, isolated = false): Promise<Placed> {
  return placeCandidateCode(record, candidateKey === null ? null : await store.getJson<StoredCandidate>(candidateKey), isolated);
}

/** Not the script's fault: Temporal retries the activity. */
function throwIfInfrastructure(result: SandboxResult): void {
  if (result.status === 'infrastructure') {
    throw ApplicationFailure.retryable(`sandbox infrastructure failure: ${result.notes.join('; ').slice(0, 500)}`, 'SandboxInfrastructure');
  }
}

export function createEvalSandboxActivities({ config, store, executor }: EvalDependencies & { executor: SandboxExecutor }): EvalSandboxActivities {
  const runs = new EvalRunConfigs(config, store);

  /**
   * The surviving mutant of the record a candidate equals (Python's own parse and unparse, in the
   * sandbox, of the candidate's function and each survivor, docstrings left out), or null.
   */
  async function survivorMatch(record: EvalRecord, candidateKey: string): Promise<string | null> {
    const survivors = survivorSources(record.origFunc, record.qualname, record.mutationSurvivors);
    if (survivors.length === 0) return null;
    const candidate = functionDefinitionSource((await store.getJson<StoredCandidate>(candidateKey)).code, record.name);
    if (candidate === null) return null;
    const mutants = survivors.map((s) => functionDefinitionSource(s.source, record.name) ?? s.source);
    const [mine, ...theirs] = await executor.astNormalize([candidate, ...mutants]);
    if (!mine?.ok) return null;
    const i = theirs.findIndex((t) => t.ok && t.normalized === mine.normalized);
    return i < 0 ? null : survivors[i]!.label;
  }

  return {
    async runCandidate({ run, item, candidateKey }) {
      const { config: runConfig, settings } = await runs.forEvalRun(run);
      const record = await recordOf(store, item);
      const placed = await placeCandidate(store, record, candidateKey, true);
      if (!placed.ok) return { ...placed.outcome, resultKey: null, durationMs: 0 };
      const { result, outcome: ran } = await runPlaced(executor, record, placed, { timeoutSec: settings.timeoutSec, limits: runLimitsOf(runConfig.sandbox) }, activityHooks());
      throwIfInfrastructure(result);
      const outcome = ran!;
      const equalsSurvivor = outcome.passed && candidateKey !== null ? await survivorMatch(record, candidateKey) : null;
      return { ...outcome, resultKey: await store.putJson(result), durationMs: result.durationMs, equalsSurvivor, ...(placed.dropped.length ? { dropped: placed.dropped } : {}) };
    },

    async runTestMatrix({ run, item, candidateKey, testsKey }) {
      const { config: runConfig, settings } = await runs.forEvalRun(run);
      const record = await recordOf(store, item);
      const tests = await store.getJson<string[]>(testsKey);
      const placed = await placeCandidate(store, record, candidateKey, true);
      if (!placed.ok || tests.length === 0) return { row: '0'.repeat(tests.length) };
      const request = runnerRequest({ mode: 'matrix', script: placed.script, target: record.qualname, snippets: tests, snippetTimeoutSec: settings.testTimeoutSec, requirements: record.requirements, candidate: placed.candidate });
      const result = await executor.run({ ...request, limits: runLimitsOf(runConfig.sandbox) }, activityHooks());
      throwIfInfrastructure(result);
      return { row: matrixRow(snippetResults(result, tests.length)) };
    },

    async collectTrainingTargets({ run, item, promptKey, passing }) {
      const { settings } = await runs.forEvalRun(run);
      const record = await recordOf(store, item);
      const targets: TrainingTarget[] = [{ code: dedentLike(record.origFunc).replace(/\s+$/, ''), source: 'ground_truth', sample: null, round: null }];
      for (const p of passing) {
        const c = await store.getJson<StoredCandidate>(p.candidateKey);
        targets.push({ code: c.preamble ? `${c.preamble}\n\n\n${c.code}` : c.code, source: p.round === 0 ? 'sample' : 'repair', sample: p.sample, round: p.round });
      }
      const normalized = await whileHeartbeating(() => executor.astNormalize(targets.map((t) => t.code)));
      const { kept, duplicates, unparsable } = dedupeTargets(targets, normalized);
      const prompt = await store.getJson<RenderedPrompt>(promptKey);
      const examples = sftExamples(kept, { prompt: prompt.messages, functionId: record.functionId, repo: record.repo, qualname: record.qualname, model: settings.model ?? 'default' });
      return { examplesKey: examples.length ? await store.putJson(examples) : null, examples: examples.length, duplicates, unparsable };
    },

    async runCaseOutputs({ run, item, casesKey }) {
      const { config: runConfig } = await runs.forEvalRun(run);
      const record = await recordOf(store, item);
      const cases = await store.getJson<string[]>(casesKey);
      if (cases.length === 0) return { outputsKey: await store.putJson([]) };
      const request = runnerRequest({ mode: 'outputs', script: record.evalScript, target: record.qualname, snippets: cases, snippetTimeoutSec: 10, requirements: record.requirements });
      const result = await executor.run({ ...request, limits: runLimitsOf(runConfig.sandbox) }, activityHooks());
      throwIfInfrastructure(result);
      return { outputsKey: await store.putJson(snippetResults(result, cases.length)) };
    },

    async augmentScript({ run, item, casesKey, outputsKeys }) {
      const { config: runConfig, settings } = await runs.forEvalRun(run);
      const record = await recordOf(store, item);
      const cases = await store.getJson<string[]>(casesKey);
      const outputs = await Promise.all(outputsKeys.map((k) => store.getJson<SnippetResult[]>(k)));
      const kept = cases.length ? deterministicCases(cases, outputs) : [];
      const proposed = cases.length;
      if (kept.length === 0) return { scriptKey: null, proposed, kept: 0, note: proposed ? 'no input gave the same value in every run' : 'the model proposed no usable input' };
      const script = augmentedScript(record.evalScript, record.qualname, kept);
      const check = await executor.run(
        { script: withNewImplementation(script, record.origFunc, record.qualname), install: true, requirements: record.requirements, timeoutSec: settings.timeoutSec, limits: runLimitsOf(runConfig.sandbox) },
        activityHooks(),
      );
      throwIfInfrastructure(check);
      if (check.status !== 'passed') return { scriptKey: null, proposed, kept: kept.length, note: `the augmented script fails with the ground truth: ${outcomeOf(check).summary}` };
      return { scriptKey: await store.put(script), proposed, kept: kept.length, note: `${kept.length} of ${proposed} input(s) kept` };
    },
  };
}

export function createEvalIoActivities({ config, store }: EvalDependencies): EvalIoActivities {
  const runs = new EvalRunConfigs(config, store);
  return {
    async loadEvalItems({ run, itemsKey, page }) {
      await runs.forEvalRun(run);
      const index = await store.getJson<EvalItemIndex>(itemsKey);
      const key = index.pages[page];
      return { items: key ? await store.getJson<EvalItem[]>(key) : [], pages: index.pages.length };
    },

    async mergeCandidateTests({ run, answers }) {
      await runs.forEvalRun(run);
      const merged = mergeCandidateTests(await Promise.all(answers.map((a) => store.getJson<string[]>(a.testsKey))));
      return { testsKey: await store.putJson(merged), count: merged.length, usage: addUsage(...answers.map((a) => a.usage)) };
    },

    async rankCandidates({ run, rows, truthRow, hidden, samples }) {
      const { settings } = await runs.forEvalRun(run);
      return rankingSummary({ rows, truthRow, hidden, samples, ks: effectiveKs(settings), genx: { tolerance: settings.genxTolerance, maxIterations: settings.genxMaxIterations } });
    },

    async writeEvalFunction({ run, item, result }) {
      const { settings } = await runs.forEvalRun(run);
      return writeFunctionResult(store, { runId: run.runId, item, settings, result });
    },

    async finalizeEval({ run, itemsKey }) {
      const { settings } = await runs.forEvalRun(run);
      return finalizeEvalRun(store, { runId: run.runId, settings, itemsKey, tick: activityHooks().heartbeat });
    },

    async solvabilityTask({ run, fn, prepared, scriptKey, packages }) {
      const { config: runConfig, settings } = await runs.forEvalRun(run);
      const [origFunc, context, evalScript] = await Promise.all([store.get(prepared.sourceKey), store.get(prepared.contextKey), store.get(scriptKey)]);
      const record: EvalRecord = {
        functionId: fn.functionId,
        idx: fn.functionId,
        qualname: fn.qualname,
        name: fn.name,
        repo: fn.repoId,
        path: fn.path,
        commit: fn.commit,
        origFunc,
        context,
        evalScript,
        requirements: packages.map((p) => `${p.name}==${p.version}`),
        format: 'ours',
        split: fn.split,
        generatedDocstring: null,
        localModules: prepared.localModules,
      };
      const stored: StoredEvalRecord = { record, raw: {} };
      return {
        item: { functionId: fn.functionId, recordKey: await store.putJson(stored), repo: fn.repoId, qualname: fn.qualname },
        hasDocstring: hasDocstring(origFunc),
        model: settings.model ?? modelForStep(runConfig, 'solve'),
      };
    },

    async failingAssertions({ run, item, runs: failed }) {
      await runs.forEvalRun(run);
      const record = await recordOf(store, item);
      const names = recordNames(record);
      const found = new Map<string, FailingAssertion>();
      let unattributed = 0;
      for (const f of failed) {
        const candidate = await store.getJson<StoredCandidate>(f.candidateKey);
        const result = await store.getJson<SandboxResult>(f.resultKey);
        let at: ScriptAssertion | null = null;
        try {
          // The script the run's traceback speaks of: the trusted process's, as runCandidate placed it.
          const placed = isolatedPlacement(record.evalScript, candidate.code, record.qualname);
          at = failingAssertion(placed.script, record.evalScript, result.exception?.traceback ?? '');
        } catch {
          at = null;
        }
        if (!at) {
          unattributed += 1;
          continue;
        }
        const key = `${at.line}\u0000${at.text}`;
        const entry = found.get(key) ?? { ...at, runs: 0, failures: [] };
        entry.runs += 1;
        const summary = f.summary.slice(0, 300);
        if (entry.failures.length < 5 && !entry.failures.includes(summary)) entry.failures.push(summary);
        found.set(key, entry);
      }
      return { assertions: [...found.values()].sort((a, b) => a.line - b.line), unattributed };
    },

    async removeAssertions({ run, item, assertions }) {
      await runs.forEvalRun(run);
      const stored = await store.getJson<StoredEvalRecord>(item.recordKey);
      const removal = removeAssertions(stored.record.evalScript, assertions, stored.record.qualname);
      if (!removal.ok) return removal;
      const next: StoredEvalRecord = { ...stored, record: { ...stored.record, evalScript: removal.script } };
      return { ok: true, item: { ...item, recordKey: await store.putJson(next) }, scriptKey: await store.put(removal.script), removed: removal.removed };
    },
  };
}
