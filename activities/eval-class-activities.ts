/**
 * Class evaluation's activities (`eval.ts --classes`), beside the function evaluation's and on the
 * same queues and terms: a class's answer and its repairs through the LLM gateway (cache,
 * exchange records, rate limits, cost), each answer's class run in the sandbox as a process of its
 * own with every test function of the environment on its own (the test runner), and the class's
 * result and the run's summary in the store. What is particular to classes (the prompts, placing
 * a class, scoring it per test and by similarity) is activities/eval/class-eval.ts; the run's
 * settings are the evaluation's own (n, temperature, ks, repair rounds, timeout), frozen with it.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { RunRef } from './contracts';
import {
  classCandidateScript,
  classEvalHeader,
  classRepairMessage,
  classRunOutcome,
  classSimilarity,
  classTestResults,
  contextModules,
  contextWithoutClass,
  extractClassCandidate,
  scoreClassSample,
  summarizeClassEval,
  testSnippet,
  unrunnableSample,
  type ClassEvalResult,
  type ClassEvalSummary,
  type ClassSampleResult,
  type ClassSimilarity,
  type ClassTestResult,
} from './eval/class-eval';
import type { CandidateRef, CandidateRun, EvalItem, SampleRound, SampleTrace } from './eval/contracts';
import { EVAL_LIMITS } from './eval/settings';
import { runnerRequest, snippetResults } from './eval/test-runner';
import { EvalRunConfigs, type EvalDependencies } from './eval-run-context';
import { renderPrompt, type ChatOutcome, type LlmGateway, type RenderedPrompt } from './llm';
import { toActivityFailure } from './llm/failures';
import { activityHooks, whileHeartbeating } from './run-context';
import { runLimitsOf, type SandboxExecutor } from './sandbox';
import { allEvalResults, type Store } from './store/types';
import type { ClassDatasetRecord } from './store/records';
import { addUsage, callUsage, emptyUsage } from './store/usage';

/** What a class item's record artifact holds: the `classes-dataset.jsonl` line as read. */
export interface StoredClassRecord {
  record: ClassDatasetRecord;
}

/** A class answer as stored: the class and the imports it brings. */
interface StoredClassCandidate {
  code: string;
  preamble: string;
}

/** What a class's run keeps (at the run's `resultKey`): each test's result, or why nothing ran, and the similarity of the class that ran. */
interface StoredClassRun {
  tests: ClassTestResult[];
  error: string | null;
  similarity: ClassSimilarity | null;
}

export interface ClassEvalLlmActivities {
  /** A sample's first answer: the class from its skeleton and what it uses (`class_solve`). */
  sampleClass(input: { run: RunRef; item: EvalItem; sample: number }): Promise<CandidateRef>;
  /** A repair (`class_repair`): the failing class and which tests failed, asked again. */
  repairClass(input: { run: RunRef; item: EvalItem; candidateKey: string | null; resultKey: string | null; failure: string; round: number; sample: number }): Promise<CandidateRef>;
}

export interface ClassEvalSandboxActivities {
  /** One run of a class answer (or, with `candidateKey: null`, of the record's own class) against each test function on its own. */
  runClassCandidate(input: { run: RunRef; item: EvalItem; candidateKey: string | null }): Promise<CandidateRun>;
}

export interface ClassEvalIoActivities {
  /** The class's `class-eval.jsonl` line into the store; returns how many samples passed every test at first. */
  writeClassEval(input: { run: RunRef; item: EvalItem; samples: SampleTrace[]; error: string | null }): Promise<{ samples: number; passed: number }>;
  /** The run's summary from the stored lines, kept in the run's manifest. */
  finalizeClassEval(input: { run: RunRef; groundTruth: boolean }): Promise<{ classes: number; errors: number; headline: Record<string, number | null> }>;
}

const recordOf = async (store: Store, item: EvalItem) => (await store.getJson<StoredClassRecord>(item.recordKey)).record;

/** The label of the answers' source in the summary when the records' own classes were run. */
export const GROUND_TRUTH_MODEL = 'ground truth';

export function createClassEvalLlmActivities({ config, store, gateway }: EvalDependencies & { gateway: LlmGateway }): ClassEvalLlmActivities {
  const runs = new EvalRunConfigs(config, store);

  /** One call with the run's LLM settings and the run's model; the prompt's version must be the run's. */
  async function ask(prompt: RenderedPrompt, run: RunRef, item: EvalItem, attempt: number): Promise<ChatOutcome> {
    const { config: runConfig, settings } = await runs.forEvalRun(run);
    await runs.checkPromptVersion(run, prompt.step, prompt.promptVersion);
    try {
      return await whileHeartbeating(() =>
        gateway.chat(
          {
            step: prompt.step,
            functionId: item.functionId,
            runId: run.runId,
            repoId: item.repo,
            messages: prompt.messages,
            promptId: prompt.promptId,
            promptVersion: prompt.promptVersion,
            attempt,
            ...(settings.model ? { model: settings.model } : {}),
            temperature: settings.temperature,
          },
          { signal: activityHooks().signal, llm: runConfig.llm },
        ),
      );
    } catch (err) {
      throw toActivityFailure(err);
    }
  }

  /** What the model is shown of the class's repository; a record whose context does not hold its class is refused (the model would see the answer). */
  function contextOf(record: ClassDatasetRecord): string {
    const context = contextWithoutClass(record.orig_context, record.orig_class);
    if (context === null) throw ApplicationFailure.nonRetryable(`the context of ${record.class_name} does not hold the class as written: the model would see the answer`, 'ClassContextUnusable');
    return context;
  }

  async function candidateRef(answer: ChatOutcome, record: ClassDatasetRecord): Promise<CandidateRef> {
    const candidate = extractClassCandidate(answer.text, record.class_name, contextModules(record.orig_context));
    const usage = callUsage(answer);
    if (!candidate.ok) return { candidateKey: null, noCode: candidate.detail, exchangeKey: answer.exchangeKey, usage };
    const stored: StoredClassCandidate = { code: candidate.code, preamble: candidate.preamble };
    return { candidateKey: await store.putJson(stored), noCode: null, exchangeKey: answer.exchangeKey, usage };
  }

  return {
    async sampleClass({ run, item, sample }) {
      const record = await recordOf(store, item);
      const prompt = renderPrompt('class_solve', { functionName: record.class_name, context: contextOf(record), skeleton: record.class_skeleton });
      // The sample index is the request's attempt: samples differ, a re-run of one is answered by the cache.
      return candidateRef(await ask(prompt, run, item, sample), record);
    },

    async repairClass({ run, item, candidateKey, resultKey, failure, round, sample }) {
      const record = await recordOf(store, item);
      const candidate = candidateKey ? await store.getJson<StoredClassCandidate>(candidateKey) : null;
      const ran = resultKey ? await store.getJson<StoredClassRun>(resultKey) : null;
      const prompt = renderPrompt('class_repair', {
        functionName: record.class_name,
        context: contextOf(record),
        skeleton: record.class_skeleton,
        candidate: candidate ? (candidate.preamble ? `${candidate.preamble}\n\n\n${candidate.code}` : candidate.code) : '# (the previous answer held no usable class)',
        errorMessage: ran ? classRepairMessage(ran.tests, ran.error) : failure,
      });
      // One attempt number per (sample, round), as the function evaluation's repairs.
      return candidateRef(await ask(prompt, run, item, sample * (EVAL_LIMITS.maxRepairRounds + 1) + round), record);
    },
  };
}

export function createClassEvalSandboxActivities({ config, store, executor }: EvalDependencies & { executor: SandboxExecutor }): ClassEvalSandboxActivities {
  const runs = new EvalRunConfigs(config, store);
  return {
    async runClassCandidate({ run, item, candidateKey }) {
      const { config: runConfig, settings } = await runs.forEvalRun(run);
      const record = await recordOf(store, item);
      const candidate: StoredClassCandidate = candidateKey ? await store.getJson<StoredClassCandidate>(candidateKey) : { code: record.orig_class, preamble: '' };
      const similarity = classSimilarity(candidate.code, record.orig_class);
      const keep = async (ran: StoredClassRun, durationMs: number): Promise<CandidateRun> => {
        const outcome = ran.error ? { passed: false, kind: 'syntax_error' as const, exceptionType: null, summary: ran.error.slice(0, 300) } : classRunOutcome(ran.tests);
        return { ...outcome, resultKey: await store.putJson(ran), durationMs };
      };
      let placed: ReturnType<typeof classCandidateScript>;
      try {
        placed = classCandidateScript(record.eval_script, { ok: true, ...candidate }, record.class_name);
      } catch (err) {
        const error = `the class could not be placed in the script: ${(err as Error).message}`;
        return keep({ tests: unrunnableSample(0, record.test_functions, error).tests, error, similarity }, 0);
      }
      // Each test function on its own (the runner loads the script as a module: its __main__ block does not run).
      const request = runnerRequest({
        mode: 'outputs',
        script: placed.script,
        candidate: placed.candidate,
        target: record.class_name,
        snippets: record.test_functions.map(testSnippet),
        snippetTimeoutSec: settings.timeoutSec,
        requirements: record.packages.map((p) => `${p.name}==${p.version}`),
      });
      const result = await executor.run({ ...request, limits: runLimitsOf(runConfig.sandbox) }, activityHooks());
      if (result.status === 'infrastructure') {
        throw ApplicationFailure.retryable(`sandbox infrastructure failure: ${result.notes.join('; ').slice(0, 500)}`, 'SandboxInfrastructure');
      }
      return keep({ tests: classTestResults(snippetResults(result, record.test_functions.length), record.test_functions, placed.script), error: null, similarity }, result.durationMs);
    },
  };
}

/** A round as a scored sample: from its stored run, or (no class in the answer) every test unrun. */
async function scoreRound(store: Store, record: ClassDatasetRecord, sample: number, round: SampleRound): Promise<ClassSampleResult> {
  if (!round.run.resultKey) return unrunnableSample(sample, record.test_functions, round.run.summary);
  const ran = await store.getJson<StoredClassRun>(round.run.resultKey);
  return scoreClassSample(sample, ran.tests, ran.similarity, ran.error);
}

/** A class's line: each sample's first answer scored, its repairs after it, and what its calls cost. */
export async function classEvalLine(store: Store, record: ClassDatasetRecord, samples: readonly SampleTrace[], error: string | null): Promise<ClassEvalResult> {
  const scored: ClassSampleResult[] = [];
  // A sample whose step failed for good before its first run says nothing of the model: it is left out, as the function evaluation does.
  for (const trace of samples.filter((s) => s.rounds.length > 0)) {
    const [first, ...later] = trace.rounds;
    const result = await scoreRound(store, record, trace.sample, first!);
    const repairs = [];
    for (const r of later) {
      const { sample: _sample, ...score } = await scoreRound(store, record, trace.sample, r);
      repairs.push({ round: r.round, ...score });
    }
    scored.push({ ...result, ...(repairs.length ? { repairs } : {}), usage: addUsage(...trace.rounds.map((r) => r.usage)) });
  }
  const reason = error ?? (scored.length === 0 ? `no sample could be evaluated: ${samples.find((s) => s.error)?.error ?? 'none was asked for'}` : null);
  return { ...classEvalHeader(record), samples: scored, ...(reason ? { error: reason } : {}), usage: addUsage(emptyUsage(), ...scored.map((s) => s.usage)) };
}

export function createClassEvalIoActivities({ config, store }: EvalDependencies): ClassEvalIoActivities {
  const runs = new EvalRunConfigs(config, store);
  return {
    async writeClassEval({ run, item, samples, error }) {
      await runs.forEvalRun(run);
      const line = await classEvalLine(store, await recordOf(store, item), samples, error);
      await store.putEvalResult(run.runId, item.functionId, line);
      return { samples: line.samples.length, passed: line.samples.filter((s) => s.passed).length };
    },

    async finalizeClassEval({ run, groundTruth }) {
      const { settings } = await runs.forEvalRun(run);
      const lines: ClassEvalResult[] = [];
      for await (const entry of allEvalResults(store, run.runId)) lines.push(entry.result as ClassEvalResult);
      const summary: ClassEvalSummary = summarizeClassEval(lines, settings.ks, { repairRounds: groundTruth ? 0 : settings.repairRounds, model: groundTruth ? GROUND_TRUTH_MODEL : (settings.model ?? 'default') });
      await store.updateRun(run.runId, { status: 'finished', summary, finishedAt: new Date().toISOString() });
      return { classes: summary.classes, errors: summary.errors?.length ?? 0, headline: summary.overall.passAtK };
    },
  };
}
