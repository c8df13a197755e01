/**
 * A function's result goes to the store when the function ends (one result per run and
 * function, an upsert: a re-run or replay replaces its own), and the run is finalized from the
 * stored results: its summary is computed a page at a time and kept in the run's manifest. No
 * file is written here; the launcher exports the run's files from the store (`run-files.ts`).
 */
import { allEvalResults, type Store } from '../store/types';
import type { EvalItem, EvalItemIndex, EvalRunSummary, FunctionEvalResult, FunctionEvalSummary } from './contracts';
import type { StoredEvalRecord } from './dataset';
import { evalLineOf, EvalLineSchema, functionEvalSummary, type EvalLine } from './results';
import type { EvalSettings } from './settings';
import { EvalSummaryBuilder, type EvalSummary } from './summary';

/** The few numbers a run returns to its caller (the rest is in the run's summary). */
export function headlineOf(summary: EvalSummary): Record<string, number | null> {
  const rounds = summary.passAtKByRound;
  return { ...summary.passAtK, ...(rounds.length > 1 ? { 'final pass@1': rounds[rounds.length - 1]!['pass@1'] ?? null } : {}) };
}

/** What a candidate artifact holds. */
export interface StoredCandidate {
  code: string;
  preamble: string;
  bare: boolean;
}

/** The function's `eval.jsonl` line, with the candidates' texts read from the artifacts. */
export async function functionLine(store: Store, input: { item: EvalItem; settings: EvalSettings; result: FunctionEvalResult }): Promise<EvalLine> {
  const { record } = await store.getJson<StoredEvalRecord>(input.item.recordKey);
  const keys = new Set(input.result.samples.flatMap((s) => s.rounds.map((r) => r.candidateKey).filter((k): k is string => k !== null)));
  const candidates = new Map<string, { code: string; bare: boolean }>();
  for (const key of keys) {
    const c = await store.getJson<StoredCandidate>(key);
    candidates.set(key, { code: c.code, bare: c.bare });
  }
  return EvalLineSchema.parse(evalLineOf(input.result, { record, settings: input.settings, model: input.settings.model ?? 'default', candidates }));
}

/** The function's result into the store; returns what its workflow reports to the run. */
export async function writeFunctionResult(store: Store, input: { runId: string; item: EvalItem; settings: EvalSettings; result: FunctionEvalResult }): Promise<FunctionEvalSummary> {
  await store.putEvalResult(input.runId, input.item.functionId, await functionLine(store, input));
  return functionEvalSummary(input.result);
}

/** The run's lines from the store, page by page, validated. */
export async function* storedLines(store: Store, runId: string, tick?: () => void): AsyncIterable<EvalLine> {
  let n = 0;
  for await (const entry of allEvalResults(store, runId)) {
    if (++n % 50 === 0) tick?.();
    yield EvalLineSchema.parse(entry.result);
  }
}

/**
 * The run's summary from its stored results, kept in the run's manifest (status `finished`).
 * Idempotent: finalizing again computes and keeps the same summary.
 */
export async function finalizeEvalRun(store: Store, input: { runId: string; settings: EvalSettings; itemsKey: string; tick?: () => void }): Promise<EvalRunSummary> {
  const { runId, settings } = input;
  const index = await store.getJson<EvalItemIndex>(input.itemsKey);
  const builder = new EvalSummaryBuilder({ runId, model: settings.model ?? 'default', settings, dataset: index.dataset });
  for await (const line of storedLines(store, runId, input.tick)) builder.add(line);
  const summary = builder.result();
  await store.updateRun(runId, { status: 'finished', summary, finishedAt: new Date().toISOString() });
  return { runId, functions: summary.functions, errors: summary.errorCount, headline: headlineOf(summary) };
}
