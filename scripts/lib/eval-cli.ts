/**
 * What `scripts/eval.ts` and `scripts/rft.ts` share: flags into run settings, the embedded stack
 * (or an existing Temporal), an optional scripted LLM server for offline runs, starting the run,
 * and printing what it measured. A refused dataset is a bad usage (exit 2, nothing started).
 */
import * as path from 'node:path';
import { evalPaths } from '../../activities/eval/run-files';
import type { EvalSettings } from '../../activities/eval/settings';
import type { EvalSummary } from '../../activities/eval/summary';
import { loadConfig, type Config } from '../../temporal.config';
import { checkEval, readDatasetInput, startEval } from './eval-run';
import { formatCostUsd, unpricedModels } from '../../activities/llm/prices';
import { loadLlmScript, startScriptedLlmServer } from '../scripted-llm/server';
import { startStack } from './stack';

export interface RunFlags {
  dataset: string;
  baseUrl?: string;
  scripted?: string;
  limit?: number;
  out?: string;
  runId?: string;
  noWorkers: boolean;
}

const pct = (v: number | null | undefined) => (v === null || v === undefined ? '–' : `${(v * 100).toFixed(1)}%`);

/** The summary as printed; `unpriced`: the run's models without a price (their cost reads "price unknown", never $0). */
export function describeSummary(summary: EvalSummary, outDir: string, unpriced: readonly string[] = []): string[] {
  const paths = evalPaths(outDir);
  const lines: string[] = [];
  lines.push(`${summary.evaluated} of ${summary.functions} function(s) evaluated, ${summary.samples} sample(s) of ${summary.model}${summary.errorCount ? `; ${summary.errorCount} could not be evaluated (first: ${summary.errors[0]!.error})` : ''}`);
  if (summary.stepErrorCount) lines.push(`${summary.stepErrorCount} step(s) failed for good while the rest was kept (first: ${summary.stepErrors[0]!.error})`);
  if (summary.missing) lines.push(`${summary.missing} function(s) have no result`);
  lines.push(`Pass@k: ${Object.entries(summary.passAtK).map(([k, v]) => `${k} ${pct(v)}`).join(', ')}`);
  if (summary.passAtKByRound.length > 1) lines.push(`Pass@1 per self-repair round: ${summary.passAtKByRound.map((r, i) => `${i === 0 ? 'initial' : `round ${i}`} ${pct(r['pass@1'])}`).join(', ')}`);
  const kinds = Object.entries(summary.failureKinds.initial).filter(([k, n]) => n > 0 && k !== 'harness');
  if (kinds.length) lines.push(`failing first answers: ${kinds.map(([k, n]) => `${k} ${n}`).join(', ')}`);
  const harness = summary.harness;
  if (harness.samples || harness.repairRounds) lines.push(`the harness failed ${harness.samples} sample(s) and ${harness.repairRounds} repair round(s), left out of Pass@k (first: ${harness.examples[0]?.summary ?? '?'})`);
  if (summary.ranking) {
    for (const [m, r] of Object.entries(summary.ranking.methods)) {
      lines.push(`ranking ${m}${m === summary.ranking.selected ? ' (selected)' : ''}: ${[...Object.entries(r.hitAtK).map(([k, v]) => `${k} ${pct(v)}`), ...Object.entries(r.precisionAtK).map(([k, v]) => `${k} ${pct(v)}`)].join(', ')}`);
    }
  }
  if (summary.training) {
    const t = summary.training;
    lines.push(`training data: ${t.examples} example(s) (${t.groundTruthExamples} ground truth), ${t.duplicates} duplicate(s) dropped; functions with a passing sample: ${t.functionsWithPassing.initial} initially, ${t.functionsWithPassing.afterRepair} after repair`);
  }
  if (summary.augmentation) lines.push(`augmentation: ${summary.augmentation.functionsAugmented} script(s) augmented, ${summary.augmentation.inputsKept} of ${summary.augmentation.inputsProposed} input(s) kept`);
  const u = summary.usage.total;
  lines.push(`LLM: ${u.calls} call(s), ${u.cachedCalls} from the cache, ${u.promptTokens} prompt + ${u.completionTokens} completion tokens, estimated ${formatCostUsd(u.costUsd, unpriced)}`);
  lines.push(`written to ${outDir}/: eval.jsonl, eval-summary.json, eval-report.html${summary.training ? `, ${path.basename(paths.sft)}` : ''}${summary.augmentation ? `, ${path.basename(paths.augmented)}` : ''}`);
  return lines;
}

/** Runs one evaluation-type run from flags and prints its summary; returns the exit code. */
export async function runFromFlags(flags: RunFlags, settings: Partial<EvalSettings>): Promise<number> {
  let config: Config = loadConfig(flags.baseUrl ? { overrides: { llm: { baseUrl: flags.baseUrl } } } : {});
  const cleanups: (() => Promise<void>)[] = [];
  if (flags.scripted) {
    // Offline: answers from a scripted fixture, served over real HTTP to the real client.
    const server = await startScriptedLlmServer(loadLlmScript(flags.scripted));
    cleanups.push(() => server.close());
    config = loadConfig({ overrides: { llm: { baseUrl: server.url, apiKey: 'scripted', model: 'scripted' } } });
    console.log(`scripted LLM server (${flags.scripted}) at ${server.url}`);
  }
  try {
    // A dataset that cannot be used is refused before anything starts.
    const input = await readDatasetInput(flags.dataset);
    const dataset = { datasetFile: input.file, ...(input.rows ? { datasetRows: input.rows } : {}) };
    checkEval(config, { ...dataset, settings, limit: flags.limit });
    const stack = await startStack({ config, workers: !flags.noWorkers, log: (l) => console.log(l) });
    cleanups.unshift(() => stack.close());
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.once(sig, () => {
        console.log(`\n${sig}: stopping workers and the servers this command started; the run stays in Temporal`);
        void Promise.all(cleanups.map((c) => c())).finally(() => process.exit(130));
      });
    }
    const started = await startEval({ config, client: stack.client, store: stack.store, ...dataset, settings, limit: flags.limit, runId: flags.runId, outDir: flags.out });
    console.log(`run ${started.run.runId}: ${started.settings.task} of ${started.dataset.functions} function(s) from ${started.dataset.file} (${started.dataset.format} format), model ${started.settings.model}`);
    for (const note of started.notes) console.log(`note: ${note}`);
    const ui = stack.uiUrl ?? `http://localhost:${config.temporal.uiPort}`;
    console.log(`watch it in the Temporal UI: ${ui}/namespaces/${config.temporal.namespace}/workflows?query=${encodeURIComponent(`RepostRunId="${started.run.runId}"`)}`);
    const result = await started.result();
    console.log('');
    const unpriced = unpricedModels(config.llm, [started.settings.model, started.settings.docstring === 'generated' ? started.settings.docstringModel : undefined]);
    for (const line of describeSummary(result.summary, result.outDir, unpriced)) console.log(line);
    return 0;
  } finally {
    for (const c of cleanups) await c();
  }
}

/** The command-line options `eval.ts` and `rft.ts` share (as `parseArgs` declares them). */
export const RUN_FLAG_OPTIONS = {
  dataset: { type: 'string' },
  model: { type: 'string' },
  'base-url': { type: 'string' },
  n: { type: 'string' },
  temperature: { type: 'string' },
  'repair-rounds': { type: 'string' },
  concurrency: { type: 'string' },
  'sample-window': { type: 'string' },
  timeout: { type: 'string' },
  limit: { type: 'string' },
  out: { type: 'string' },
  'run-id': { type: 'string' },
  'no-workers': { type: 'boolean' },
  scripted: { type: 'string' },
} as const;
