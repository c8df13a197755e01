/**
 * The evaluation's bookkeeping (task queue `io`): the run's items, merged candidate tests, the
 * rankings, a function's result and the run's summary, and the solvability stage's records (a
 * crawl's function as an item, the assertions failing runs stopped at, an item with assertions
 * removed). Nothing here calls a model or runs a container.
 */
import type { FunctionRef, PreparedFunction, RunRef } from './contracts';
import { failingAssertion, removeAssertions, type ScriptAssertion } from './eval/assertions';
import { mergeCandidateTests } from './eval/candidate-tests';
import type {
  AssertionRemoval,
  EvalItem,
  EvalItemIndex,
  EvalRunSummary,
  FunctionEvalResult,
  FunctionEvalSummary,
  RankingSummary,
  SolvabilityTask,
  FailingAssertion,
} from './eval/contracts';
import type { EvalRecord, StoredEvalRecord } from './eval/dataset';
import { recordNames } from './eval/harness';
import { finalizeEvalRun, writeFunctionResult, type StoredCandidate } from './eval/finalize';
import { hasDocstring } from './eval/prompt-context';
import { rankingSummary } from './eval/ranking-summary';
import { effectiveKs } from './eval/settings';
import { modelForStep } from './llm';
import { activityHooks } from './run-context';
import { EvalRunConfigs, recordOf, type EvalDependencies } from './eval-run-context';
import { isolatedPlacement, type SandboxResult } from './sandbox';
import { addUsage, type Usage } from './store/usage';

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
