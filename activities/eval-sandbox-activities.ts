/**
 * The evaluation's container runs (task queue `sandbox`): a candidate against the record's hidden
 * tests (in a process of its own), a row of the candidate-test matrix, training targets' AST
 * normalisation, and the augmentation's runs. An infrastructure fault is thrown as retryable; a
 * candidate's failure, or one the harness caused, is an outcome.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { RunRef } from './contracts';
import { augmentedScript, deterministicCases } from './eval/augmentation';
import type { AugmentationResult, CandidateRun, EvalItem, TrainingTargets } from './eval/contracts';
import type { EvalRecord } from './eval/dataset';
import { placeCandidateCode, type Placed } from './eval/placement';
import { runPlaced } from './eval/verdict';
import type { StoredCandidate } from './eval/finalize';
import { outcomeOf } from './eval/outcome';
import { dedupeTargets, sftExamples, type TrainingTarget } from './eval/sft';
import { functionDefinitionSource, survivorSources } from './eval/survivors';
import { matrixRow, runnerRequest, snippetResults, type SnippetResult } from './eval/test-runner';
import type { RenderedPrompt } from './llm';
import { activityHooks, whileHeartbeating } from './run-context';
import { EvalRunConfigs, recordOf, type EvalDependencies } from './eval-run-context';
import { dedentLike } from './sandbox/new-implementation';
import { runLimitsOf, withNewImplementation, type SandboxExecutor, type SandboxResult } from './sandbox';
import type { Store } from './store/types';

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
