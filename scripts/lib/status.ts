/**
 * A run's progress as one typed snapshot, read from the store (any machine that reaches the
 * store can ask) and, when a client is given and answers, from Temporal: repositories listed and
 * done, functions finished (accepted, rejected by stage) and in flight by stage (Temporal's search
 * attribute; without Temporal, the last LLM step the store recorded), and the LLM calls, tokens and
 * estimated cost so far. `ProgressTracker` adds the rate and an estimate of the time left, for the
 * live views of `start.ts` and `status.ts --watch`.
 *
 * `scripts/status.ts` prints it; a live view can call `runStatus` again and again.
 */
import type { Client } from '@temporalio/client';
import type { FunctionStage, TargetKind } from '../../activities/contracts';
import { candidateIds } from '../../activities/dataset/run-files';
import { REJECTION_STAGES, STAGE_ORDER } from '../../activities/dataset/records';
import type { FolderRunReader } from '../../activities/dataset/run-reader';
import { stagesOff } from '../../activities/dataset/stages-off';
import { emptyRoundsRan, type RoundsRan } from '../../activities/store/records';
import { emptyRefusals, formatRefusals, type RefusalTotals } from '../../activities/store/refusals';
import type { Usage } from '../../activities/store/usage';
import type { LlmStep } from '../../activities/llm/types';
import { readWaitingRequests, summarizeWaiting } from '../../activities/llm/batch/collector';
import { allEvalResults, evaluatedKind, runKindLabel, type RunManifest, type Store } from '../../activities/store/types';
import { formatCostUsd, unpricedModelsOfSettings } from '../../activities/llm/prices';
import { RunSettingsSchema } from '../../activities/run-settings';

/** The pipeline stage an LLM step belongs to. */
const STAGE_OF_STEP: Record<LlmStep, FunctionStage> = {
  sandbox: 'sandbox',
  aggregate: 'sandbox',
  tests: 'tests',
  debug: 'debug',
  coverage: 'coverage',
  mutation: 'mutation',
  check_functionality: 'functionality_check',
  check_tests: 'test_check',
  // In a crawl, a docstring and implementations from the prompt are the solvability stage's, and so is the assertions' judge.
  docstring: 'solvability',
  solve: 'solvability',
  check_assertion: 'solvability',
  // The evaluation's other steps never occur in a crawl; they count as a first step.
  repair: 'sandbox',
  candidate_tests: 'sandbox',
  test_inputs: 'sandbox',
  class_sandbox: 'sandbox',
  class_tests: 'tests',
  class_debug: 'debug',
  class_coverage: 'coverage',
  class_check_functionality: 'functionality_check',
  class_check_tests: 'test_check',
  class_solve: 'sandbox',
  class_repair: 'sandbox',
};

/** Function ids asked about per `recordedIds` call. */
const ID_BATCH = 500;

export interface RunStatus {
  runId: string;
  kind: RunManifest['kind'];
  status: RunManifest['status'];
  createdAt: string;
  finishedAt: string | null;
  /** Where it was read: the run's store, or its folder (a run folder whose run is not in the store: its summary.json and run.json). */
  store: { kind: Store['kind'] | 'folder'; location: string };
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
    /** Debug and coverage rounds that ran, over the functions finished so far. */
    rounds: RoundsRan;
  };
  /**
   * Class environments, counted apart from the functions (whose figures above, rejections by stage
   * and rounds included, leave them out, as summary.json does; the stages in progress are over
   * both). Absent or null when the run makes none.
   */
  classes?: { candidates: number; finished: number; accepted: number; rejected: number; rejectedByStage?: Partial<Record<FunctionStage, number>> } | null;
  /**
   * An evaluation run: what it evaluates (`function` for one stored before this was kept), its
   * items and the items with a result so far. Its repositories and functions above count nothing
   * (an evaluation has no records). Absent for a crawl.
   */
  evaluation?: { evaluates: TargetKind; items: number; results: number };
  /** LLM calls of the run so far (exchanges in the store). */
  llm: Usage;
  /** Optional stages the run had switched off (every function passes them unchecked). */
  stagesOff?: FunctionStage[];
  /** The run's models without a price in its `llm.prices`: their calls count $0, shown as "price unknown". */
  unpricedModels?: string[];
  /** Of those, the answers refused (unparseable, failing a sanity check) and what they cost, by check. */
  refused: RefusalTotals;
  /** Requests of the run waiting for a batch answer (batch mode), from the data directory's collector files; null when not asked. */
  batch?: ReturnType<typeof summarizeWaiting> | null;
  /** What Temporal says, when it was asked and answered. */
  temporal: { crawl: string | null; runningFunctions: number } | { error: string } | null;
}

export class RunNotFoundError extends Error {
  override name = 'RunNotFoundError';
}

export interface RunStatusOptions {
  /** A Temporal client to ask about the run's workflows (optional: the store alone answers the rest). */
  client?: Client | null;
  /** The data directory whose LLM worker collects batch requests (the machine's own): its waiting requests are shown. */
  dataDir?: string;
  now?: () => number;
}

export async function runStatus(store: Store, runId: string, options: RunStatusOptions = {}): Promise<RunStatus> {
  const manifest = await store.getRun(runId);
  if (!manifest) throw new RunNotFoundError(`no run ${runId} in the store at ${store.location}`);
  const [repos, counts, llm, refused] = await Promise.all([store.listRepoProgress(runId), store.countRecords(runId), store.runUsage(runId), store.runRefusals(runId)]);
  // A repository's candidates are its functions then its sampled classes.
  const classCandidates = repos.reduce((n, r) => n + (r.classSelection?.sampled ?? 0), 0);
  const candidates = repos.reduce((n, r) => n + r.outcome.candidates, 0) - classCandidates;
  const makesClasses = repos.some((r) => r.classSelection) || counts.classes.total > 0;
  const temporal = options.client ? await temporalStatus(options.client, runId) : null;
  const batch = options.dataDir !== undefined ? summarizeWaiting(await readWaitingRequests(options.dataDir, runId), (options.now ?? Date.now)()) : null;
  // Running functions by stage: Temporal knows each one's stage (a search attribute it updates as
  // the function moves), for any size of run. Without Temporal, the store's exchanges tell the
  // last LLM step of each unfinished function (a full pass over them: fine for one look).
  const inProgressByStage = temporal && 'byStage' in temporal ? temporal.byStage : await inProgressFromExchanges(store, runId);
  const frozen = await store.getJson(manifest.settingsKey).catch(() => null);
  const settings = RunSettingsSchema.safeParse(frozen);
  const unpriced = settings.success ? unpricedModelsOfSettings(settings.data.config) : [];
  const off = stagesOff((frozen as { pipeline?: unknown } | null)?.pipeline);
  // Functions and class environments apart, as summary.json counts them.
  const rejectedByStage: Partial<Record<FunctionStage, number>> = {};
  const classRejectedByStage: Partial<Record<FunctionStage, number>> = {};
  for (const stage of REJECTION_STAGES) {
    const ofClasses = counts.classes.byStage[stage] ?? 0;
    const ofFunctions = (counts.byStage[stage] ?? 0) - ofClasses;
    if (ofFunctions) rejectedByStage[stage] = ofFunctions;
    if (ofClasses) classRejectedByStage[stage] = ofClasses;
  }
  const functionRounds = {
    debug: { functions: counts.rounds.debug.functions - counts.classes.rounds.debug.functions, rounds: counts.rounds.debug.rounds - counts.classes.rounds.debug.rounds },
    coverage: { functions: counts.rounds.coverage.functions - counts.classes.rounds.coverage.functions, rounds: counts.rounds.coverage.rounds - counts.classes.rounds.coverage.rounds },
  };

  let results = 0;
  if (manifest.kind === 'eval') for await (const _ of allEvalResults(store, runId)) results += 1;
  return {
    runId,
    kind: manifest.kind,
    ...(manifest.kind === 'eval' ? { evaluation: { evaluates: evaluatedKind(manifest), items: manifest.sources, results } } : {}),
    unpricedModels: unpriced,
    stagesOff: off,
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
      candidates,
      finished: counts.total - counts.classes.total,
      accepted: counts.accepted - counts.classes.accepted,
      rejected: counts.total - counts.accepted - (counts.classes.total - counts.classes.accepted),
      rejectedByStage,
      inProgressByStage,
      rounds: functionRounds,
    },
    classes: makesClasses
      ? { candidates: classCandidates, finished: counts.classes.total, accepted: counts.classes.accepted, rejected: counts.classes.total - counts.classes.accepted, rejectedByStage: classRejectedByStage }
      : null,
    llm,
    refused,
    batch,
    temporal: temporal && 'byStage' in temporal ? { crawl: temporal.crawl, runningFunctions: temporal.runningFunctions } : temporal,
  };
}

/**
 * The status of a finished run from its folder alone (a folder copied from another machine, whose
 * run the store does not hold): its summary.json and run.json. Nothing is in flight and Temporal is not asked.
 */
export async function folderRunStatus(reader: FolderRunReader): Promise<RunStatus> {
  const [summary, info] = await Promise.all([reader.summary(), reader.info()]);
  const skipped = summary.skippedRepos.length;
  const rejectedByStage: Partial<Record<FunctionStage, number>> = {};
  for (const stage of REJECTION_STAGES) if (summary.rejectedAt[stage]) rejectedByStage[stage] = summary.rejectedAt[stage];
  const c = summary.classes;
  const classRejectedByStage: Partial<Record<FunctionStage, number>> = {};
  for (const stage of REJECTION_STAGES) if (c?.rejectedAt[stage]) classRejectedByStage[stage] = c.rejectedAt[stage];
  const missing = typeof summary.missingRecords === 'number' ? summary.missingRecords : 0;
  const noUsage = { calls: 0, cachedCalls: 0, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyMs: 0 };
  return {
    runId: summary.runId,
    kind: 'crawl',
    status: 'finished',
    createdAt: info.createdAt ?? '',
    finishedAt: null,
    store: { kind: 'folder', location: reader.location },
    unpricedModels: info.unpricedModels ?? [],
    stagesOff: stagesOff(info.settings),
    repositories: { total: summary.repositories + skipped, listed: summary.repositories + skipped, done: summary.repositories + skipped, skipped },
    functions: {
      candidates: summary.functions + missing,
      finished: summary.functions,
      accepted: summary.accepted,
      rejected: summary.rejected,
      rejectedByStage,
      inProgressByStage: {},
      rounds: summary.rounds ?? emptyRoundsRan(),
    },
    classes: c ? { candidates: c.classes, finished: c.classes, accepted: c.accepted, rejected: c.rejected, rejectedByStage: classRejectedByStage } : null,
    llm: summary.llm?.total ?? noUsage,
    refused: summary.regenerations ?? emptyRefusals(),
    batch: null,
    temporal: null,
  };
}

/** Unfinished functions by the stage of the last LLM step the store recorded for them ('prepare': none yet). */
async function inProgressFromExchanges(store: Store, runId: string): Promise<Partial<Record<FunctionStage, number>>> {
  const lastStep = new Map<string, string>();
  for await (const e of store.listRunExchanges(runId)) lastStep.set(e.functionId, e.step);
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
  return inProgressByStage;
}

/** Stages a running function can be at (the search attribute its workflow keeps up to date). */
const RUNNING_STAGES = STAGE_ORDER.filter((s) => s !== 'accepted');

/** The crawl workflow's status, and the run's running function (and class) workflows in all and by stage. */
async function temporalStatus(client: Client, runId: string): Promise<{ crawl: string | null; runningFunctions: number; byStage: Partial<Record<FunctionStage, number>> } | { error: string }> {
  try {
    let crawl: string | null = null;
    try {
      crawl = (await client.workflow.getHandle(`${runId}/crawl`).describe()).status.name;
    } catch (err) {
      if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
    }
    // A class environment's workflow goes through the same stages under its own type.
    const running = `RepostRunId = "${runId}" AND (WorkflowType = "functionWorkflow" OR WorkflowType = "classWorkflow") AND ExecutionStatus = "Running"`;
    const [all, ...perStage] = await Promise.all([
      client.workflow.count(running),
      ...RUNNING_STAGES.map((stage) => client.workflow.count(`${running} AND RepostStage = "${stage}"`)),
    ]);
    const byStage: Partial<Record<FunctionStage, number>> = {};
    RUNNING_STAGES.forEach((stage, i) => {
      if (perStage[i]!.count > 0) byStage[stage] = perStage[i]!.count;
    });
    return { crawl, runningFunctions: all!.count, byStage };
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
  const header = [
    `run ${s.runId} (${runKindLabel({ kind: s.kind, targetKind: s.evaluation?.evaluates })}): ${s.status}, started ${s.createdAt}${s.finishedAt ? `, finished ${s.finishedAt}` : ''}`,
    s.store.kind === 'folder' ? `read from the run folder ${s.store.location} (its run is not in the store)` : `store: ${s.store.kind} at ${s.store.location}`,
  ];
  const llm = [
    `LLM: ${s.llm.calls} call(s), ${s.llm.cachedCalls} from the cache, ${s.llm.promptTokens} prompt (${s.llm.cachedPromptTokens ?? 0} cached by the endpoint) + ${s.llm.completionTokens} completion tokens, estimated ${formatCostUsd(s.llm.costUsd, s.unpricedModels ?? [])}`,
    `  refused answers: ${s.refused.calls} of ${s.refused.reviewed} reviewed, ${s.refused.promptTokens + s.refused.completionTokens} tokens, estimated ${formatCostUsd(s.refused.costUsd, s.unpricedModels ?? [])}${refusalChecks(s.refused, s.unpricedModels ?? [])}`,
  ];
  // An evaluation has items and results, not repositories and records.
  if (s.evaluation) return [...header, `items: ${s.evaluation.results}/${s.evaluation.items} with a result`, ...llm].join('\n');
  const lines = [
    ...header,
    `repositories: ${s.repositories.done}/${s.repositories.total} done (${s.repositories.listed} listed, ${s.repositories.skipped} skipped)`,
    `functions: ${s.functions.finished}/${s.functions.candidates} finished, ${s.functions.accepted} accepted, ${s.functions.rejected} rejected`,
    `  rejected by stage: ${stages(s.functions.rejectedByStage)}`,
    ...(s.status === 'finished' ? [] : [`  in progress by stage: ${stages(s.functions.inProgressByStage)}`]),
    `  rounds that ran: ${formatRounds(s.functions.rounds)}`,
    ...(s.stagesOff?.length ? [`  stages off in this run (passed unchecked): ${s.stagesOff.join(', ')}`] : []),
    ...(s.classes ? [`classes: ${s.classes.finished}/${s.classes.candidates} finished, ${s.classes.accepted} accepted, ${s.classes.rejected} rejected`, `  rejected by stage: ${stages(s.classes.rejectedByStage ?? {})}`] : []),
    ...llm,
  ];
  if (s.batch && s.batch.waiting > 0) lines.push(`LLM batches: ${formatWaiting(s.batch)}`);
  if (s.temporal && 'error' in s.temporal) lines.push(`Temporal: not reachable (${s.temporal.error})`);
  else if (s.temporal) lines.push(`Temporal: crawl workflow ${s.temporal.crawl ?? 'not found'}, ${s.temporal.runningFunctions} function workflow(s) running`);
  return lines.join('\n');
}

function formatWaiting(b: NonNullable<RunStatus['batch']>): string {
  return `${b.waiting} request(s) waiting in ${b.batches} batch(es)${b.unsent ? ` (${b.unsent} not sent yet)` : ''}, oldest ${formatDuration(b.oldestAgeMs ?? 0)}`;
}

/** "debug 3 function(s), 5 round(s); coverage 2 function(s), 2 round(s)". */
export function formatRounds(r: RoundsRan): string {
  return `debug ${r.debug.functions} function(s), ${r.debug.rounds} round(s); coverage ${r.coverage.functions} function(s), ${r.coverage.rounds} round(s)`;
}

function refusalChecks(r: RefusalTotals, unpriced: readonly string[]): string {
  // A model without a price counts $0: its checks' cost is unknown, never shown as $0.0000.
  const cost = (usd: number) => (unpriced.length ? 'price unknown' : `$${usd.toFixed(4)}`);
  const checks = Object.entries(r.byCheck)
    .sort(([a, x], [b, y]) => y.calls - x.calls || a.localeCompare(b))
    .map(([check, f]) => `${check}: ${f.calls} (${f.promptTokens + f.completionTokens} tokens, ${cost(f.costUsd)})`);
  return checks.length ? ` (by check: ${checks.join(', ')})` : '';
}

/** How far back the finishing rate is measured for the estimate of the time left. */
const RATE_WINDOW_MS = 10 * 60_000;

export interface ProgressSample {
  status: RunStatus;
  /** Since the run was created. */
  elapsedMs: number;
  /** Functions expected in all: candidates listed, plus the repositories not listed yet at the average so far. */
  expectedFunctions: number;
  /** Class environments expected in all, likewise (0 when the run makes none). */
  expectedClasses: number;
  /** Functions and classes finished per minute, over the last minutes. */
  perMinute: number | null;
  /** Estimated time left, null until there is a rate. */
  etaMs: number | null;
}

/** Successive status snapshots of one run, with the finishing rate and the time left. */
export class ProgressTracker {
  private readonly history: { at: number; finished: number }[] = [];

  constructor(
    private readonly store: Store,
    private readonly runId: string,
    private readonly client: Client | null = null,
    private readonly now: () => number = Date.now,
    private readonly dataDir?: string,
  ) {}

  async sample(): Promise<ProgressSample> {
    return this.add(await runStatus(this.store, this.runId, { client: this.client, now: this.now, ...(this.dataDir !== undefined ? { dataDir: this.dataDir } : {}) }));
  }

  /** Adds a snapshot (taken now) and derives the rate and the estimate. */
  add(status: RunStatus): ProgressSample {
    const at = this.now();
    const finished = status.functions.finished + (status.classes?.finished ?? 0);
    this.history.push({ at, finished });
    while (this.history.length > 2 && at - this.history[0]!.at > RATE_WINDOW_MS) this.history.shift();
    const first = this.history[0]!;
    const done = finished - first.finished;
    const perMinute = at > first.at && done > 0 ? (done / (at - first.at)) * 60_000 : null;
    const r = status.repositories;
    const listedWithCandidates = Math.max(1, r.listed - r.skipped);
    const unlisted = Math.max(0, r.total - r.listed);
    const expected = (candidates: number) => candidates + Math.round((unlisted * candidates) / listedWithCandidates);
    const expectedFunctions = expected(status.functions.candidates);
    const expectedClasses = status.classes ? expected(status.classes.candidates) : 0;
    const left = Math.max(0, expectedFunctions + expectedClasses - finished);
    return {
      status,
      elapsedMs: Math.max(0, at - Date.parse(status.createdAt)),
      expectedFunctions,
      expectedClasses,
      perMinute,
      etaMs: status.status === 'finished' ? 0 : perMinute ? (left / perMinute) * 60_000 : null,
    };
  }
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

function compact(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${(n / 1e3).toFixed(0)}k` : String(n);
}

/** One line: repositories, functions (and classes) by stage, accepted and rejected, LLM use, time and time left. */
/** What the run has cost per record accepted so far: "$0.12 per accepted record"; "price unknown ..." when a model has no price. */
export function perAcceptedRecord(costUsd: number, accepted: number, unpriced: readonly string[]): string {
  if (unpriced.length > 0) return 'price unknown per accepted record';
  if (accepted === 0) return 'no record accepted yet';
  return `$${(costUsd / accepted).toFixed(costUsd / accepted < 0.01 ? 4 : 2)} per accepted record`;
}

export function formatProgressLine(p: ProgressSample): string {
  const s = p.status;
  const approx = s.repositories.listed < s.repositories.total ? '~' : '';
  const running = Object.entries(s.functions.inProgressByStage)
    .filter(([, n]) => n)
    .map(([stage, n]) => `${stage} ${n}`)
    .join(' ');
  const tokens = s.llm.promptTokens + s.llm.completionTokens;
  const accepted = s.functions.accepted + (s.classes?.accepted ?? 0);
  const eta = p.etaMs === null ? 'time left unknown yet' : p.etaMs === 0 ? 'done' : `~${formatDuration(p.etaMs)} left`;
  return [
    `repos ${s.repositories.done}/${s.repositories.total}`,
    `functions ${s.functions.finished}/${approx}${p.expectedFunctions}${s.classes ? `, classes ${s.classes.finished}/${approx}${p.expectedClasses}` : ''}${running ? ` (running: ${running})` : ''}`,
    `accepted ${s.functions.accepted + (s.classes?.accepted ?? 0)}, rejected ${s.functions.rejected + (s.classes?.rejected ?? 0)}`,
    `rounds: debug ${s.functions.rounds.debug.rounds} in ${s.functions.rounds.debug.functions} fn, coverage ${s.functions.rounds.coverage.rounds} in ${s.functions.rounds.coverage.functions} fn`,
    `LLM ${s.llm.calls} calls, ${compact(tokens)} tokens, ${formatCostUsd(s.llm.costUsd, s.unpricedModels ?? [], 2)}, ${perAcceptedRecord(s.llm.costUsd, accepted, s.unpricedModels ?? [])}`,
    `${formatRefusals(s.refused)}: ${compact(s.refused.promptTokens + s.refused.completionTokens)} tokens, ${s.unpricedModels?.length && !s.refused.costUsd ? 'price unknown' : `$${s.refused.costUsd.toFixed(2)}`}`,
    ...(s.batch && s.batch.waiting > 0 ? [`batch: ${s.batch.waiting} waiting, oldest ${formatDuration(s.batch.oldestAgeMs ?? 0)}`] : []),
    `${formatDuration(p.elapsedMs)} elapsed, ${eta}`,
  ].join(' | ');
}
