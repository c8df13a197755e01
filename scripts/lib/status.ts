/**
 * A run's progress as one typed snapshot, read from the store (any machine that reaches the
 * store can ask) and, when a client is given and answers, from Temporal: repositories listed and
 * done, functions finished (accepted, rejected by stage) and in flight (by the last LLM step the
 * store recorded for them), and the LLM calls, tokens and estimated cost so far.
 *
 * `scripts/status.ts` prints it; a live view can call `runStatus` again and again.
 */
import type { Client } from '@temporalio/client';
import type { FunctionStage } from '../../activities/contracts';
import { candidateIds } from '../../activities/dataset/run-files';
import { REJECTION_STAGES } from '../../activities/dataset/records';
import { addUsage, emptyUsage, type UsageTotals } from '../../activities/llm/cost';
import type { LlmStep } from '../../activities/llm/types';
import type { RunManifest, Store } from '../../activities/store/types';

/** The pipeline stage an LLM step belongs to. */
const STAGE_OF_STEP: Record<LlmStep, FunctionStage> = {
  sandbox: 'sandbox',
  aggregate: 'sandbox',
  tests: 'tests',
  debug: 'debug',
  coverage: 'coverage',
  check_functionality: 'functionality_check',
  check_tests: 'test_check',
  docstring: 'sandbox',
  solve: 'sandbox',
  // The evaluation's steps never occur in a crawl; like `solve`, they count as a first step.
  repair: 'sandbox',
  candidate_tests: 'sandbox',
  test_inputs: 'sandbox',
};

/** Function ids asked about per `recordedIds` call. */
const ID_BATCH = 500;

export interface RunStatus {
  runId: string;
  kind: RunManifest['kind'];
  status: RunManifest['status'];
  createdAt: string;
  finishedAt: string | null;
  store: { kind: Store['kind']; location: string };
  repositories: {
    /** Sources of the run. */
    total: number;
    /** Repositories whose candidates were listed (or that were skipped). */
    listed: number;
    done: number;
    skipped: number;
  };
  functions: {
    /** Candidates of the repositories listed so far. */
    candidates: number;
    /** Functions with a record: accepted + rejected. */
    finished: number;
    accepted: number;
    rejected: number;
    rejectedByStage: Partial<Record<FunctionStage, number>>;
    /**
     * Candidates without a record yet, by the stage of the last LLM step the store recorded for
     * them ('prepare': no LLM step yet, waiting or being prepared).
     */
    inProgressByStage: Partial<Record<FunctionStage, number>>;
  };
  /** LLM calls of the run so far (exchanges in the store). */
  llm: UsageTotals;
  /** What Temporal says, when it was asked and answered. */
  temporal: { crawl: string | null; runningFunctions: number } | { error: string } | null;
}

export class RunNotFoundError extends Error {
  override name = 'RunNotFoundError';
}

export interface RunStatusOptions {
  /** A Temporal client to ask about the run's workflows (optional: the store alone answers the rest). */
  client?: Client | null;
}

export async function runStatus(store: Store, runId: string, options: RunStatusOptions = {}): Promise<RunStatus> {
  const manifest = await store.getRun(runId);
  if (!manifest) throw new RunNotFoundError(`no run ${runId} in the store at ${store.location}`);
  const repos = await store.listRepoProgress(runId);
  const counts = await store.countRecords(runId);

  // The last LLM step of each function, and the run's usage, in one pass over its exchanges.
  let llm = emptyUsage();
  const lastStep = new Map<string, string>();
  for await (const e of store.listRunExchanges(runId)) {
    llm = addUsage(llm, e);
    lastStep.set(e.functionId, e.step);
  }

  const candidates = [...(await candidateIds(store, runId))];
  const inProgressByStage: Partial<Record<FunctionStage, number>> = {};
  for (let i = 0; i < candidates.length; i += ID_BATCH) {
    const batch = candidates.slice(i, i + ID_BATCH);
    const recorded = await store.recordedIds(runId, batch);
    for (const id of batch) {
      if (recorded.has(id)) continue;
      const step = lastStep.get(id) as LlmStep | undefined;
      const stage = step ? (STAGE_OF_STEP[step] ?? 'sandbox') : 'prepare';
      inProgressByStage[stage] = (inProgressByStage[stage] ?? 0) + 1;
    }
  }
  const rejectedByStage: Partial<Record<FunctionStage, number>> = {};
  for (const stage of REJECTION_STAGES) if (counts.byStage[stage]) rejectedByStage[stage] = counts.byStage[stage];

  return {
    runId,
    kind: manifest.kind,
    status: manifest.status,
    createdAt: manifest.createdAt,
    finishedAt: manifest.finishedAt ?? null,
    store: { kind: store.kind, location: store.location },
    repositories: {
      total: manifest.sources,
      listed: repos.length,
      done: repos.filter((r) => r.done).length,
      skipped: repos.filter((r) => r.outcome.skipped).length,
    },
    functions: {
      candidates: candidates.length,
      finished: counts.total,
      accepted: counts.accepted,
      rejected: counts.total - counts.accepted,
      rejectedByStage,
      inProgressByStage,
    },
    llm,
    temporal: options.client ? await temporalStatus(options.client, runId) : null,
  };
}

/** The crawl workflow's status and the number of the run's function workflows still running. */
async function temporalStatus(client: Client, runId: string): Promise<RunStatus['temporal']> {
  try {
    let crawl: string | null = null;
    try {
      crawl = (await client.workflow.getHandle(`${runId}/crawl`).describe()).status.name;
    } catch (err) {
      if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
    }
    const running = await client.workflow.count(`RepostRunId = "${runId}" AND WorkflowType = "functionWorkflow" AND ExecutionStatus = "Running"`);
    return { crawl, runningFunctions: running.count };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** The snapshot as the CLI prints it. */
export function formatRunStatus(s: RunStatus): string {
  const stages = (m: Partial<Record<string, number>>) =>
    Object.entries(m)
      .filter(([, n]) => n)
      .map(([stage, n]) => `${stage}: ${n}`)
      .join(', ') || 'none';
  const lines = [
    `run ${s.runId} (${s.kind}): ${s.status}, started ${s.createdAt}${s.finishedAt ? `, finished ${s.finishedAt}` : ''}`,
    `store: ${s.store.kind} at ${s.store.location}`,
    `repositories: ${s.repositories.done}/${s.repositories.total} done (${s.repositories.listed} listed, ${s.repositories.skipped} skipped)`,
    `functions: ${s.functions.finished}/${s.functions.candidates} finished, ${s.functions.accepted} accepted, ${s.functions.rejected} rejected`,
    `  rejected by stage: ${stages(s.functions.rejectedByStage)}`,
    `  in progress by stage: ${stages(s.functions.inProgressByStage)}`,
    `LLM: ${s.llm.calls} call(s), ${s.llm.cachedCalls} from the cache, ${s.llm.promptTokens} prompt + ${s.llm.completionTokens} completion tokens, estimated $${s.llm.costUsd.toFixed(4)}`,
  ];
  if (s.temporal && 'error' in s.temporal) lines.push(`Temporal: not reachable (${s.temporal.error})`);
  else if (s.temporal) lines.push(`Temporal: crawl workflow ${s.temporal.crawl ?? 'not found'}, ${s.temporal.runningFunctions} function workflow(s) running`);
  return lines.join('\n');
}
