/**
 * A run's summary and files, computed from the store a page at a time.
 *
 * A run's records are those of its candidates: the functions its repositories listed (candidate
 * pages recorded with each repository's progress). A record left in the store by an earlier,
 * different incarnation of the run (a resumed run whose sources changed) is not one of them and
 * never enters the dataset.
 */
import * as path from 'node:path';
import type { FunctionRef, FunctionStage, RunSummary } from '../contracts';
import { addRoundsRan, emptyRoundsRan, isClassRecord, type RoundsRan } from '../store/records';
import { addRefusal, emptyRefusals, type RefusalTotals } from '../store/refusals';
import { allRecords, type Store } from '../store/types';
import { ClassSummaryBuilder, type ClassRunSummary } from './class-summary';
import { FunnelCounter, JsonLinesWriter, UsageCounter, runPaths, writeFileAtomic } from './records';
import { SolvabilityFiguresBuilder, type SolvabilityFigures } from './solvability-figures';
import { StatisticsBuilder, type DatasetStatistics } from './statistics';
import { TestStrengthBuilder, type TestStrength } from './test-strength';

/** `summary.json`: the small summary a crawl workflow returns, and the rest of the run's figures. */
export interface RunSummaryFile extends RunSummary {
  rejectedAt: Record<string, number>;
  /**
   * The debug and coverage rounds that ran: functions with at least one round and rounds in all
   * (the funnel counts a function as reaching those stages once it passed the ones before).
   */
  rounds: RoundsRan;
  bySplit: Record<string, { accepted: number; rejected: number }>;
  /** Candidates without a record (only when the run did not finish). */
  missingRecords: number;
  skippedRepos: { source: unknown; reason: string }[];
  llm: ReturnType<UsageCounter['result']>;
  /**
   * Answers refused (unparseable, or failing a sanity check such as `test_calls_target`) and what
   * they cost: their usage (calls, tokens, estimated cost) in all, by check and by step, with the answers
   * reviewed per step (the refusal rate's denominator). Each was asked again or ended its step.
   */
  regenerations: RefusalTotals;
  /** RepoST's Table 4 per split, and the cost of an accepted example (`statistics.ts`). */
  statistics: DatasetStatistics;
  /** The accepted records' mutation scores and stability verdicts (`test-strength.ts`). */
  testStrength: TestStrength;
  /** The run's class environments (`class-summary.ts`), when it made any; the figures above are its functions'. */
  classes?: ClassRunSummary;
  /** The solvability stage: solve rates of the records it checked, assertions removed, docstrings written (`solvability-figures.ts`). */
  solvability: SolvabilityFigures;
}

export interface Progress {
  /** Called every few hundred records, e.g. to heartbeat a long activity. */
  tick?: () => void;
}

/** Function (and class) ids of the run's candidates, from its repositories' candidate pages. */
export async function candidateIds(store: Store, runId: string, progress: Progress = {}): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const repo of await store.listRepoProgress(runId)) {
    for (const key of repo.candidatePages) {
      for (const fn of await store.getJson<FunctionRef[]>(key)) ids.add(fn.functionId);
      progress.tick?.();
    }
  }
  return ids;
}

/** The run's summary, streamed over its records (bounded memory whatever the run's size). */
export async function summarizeRun(store: Store, runId: string, progress: Progress = {}): Promise<RunSummaryFile> {
  const repos = await store.listRepoProgress(runId);
  const candidates = await candidateIds(store, runId, progress);
  const funnel = new FunnelCounter();
  const bySplit: Record<string, { accepted: number; rejected: number }> = {};
  const statistics = new StatisticsBuilder();
  const strength = new TestStrengthBuilder();
  const classes = new ClassSummaryBuilder();
  for (const repo of repos) classes.addRepository(repo);
  const solvability = new SolvabilityFiguresBuilder();
  const rounds = emptyRoundsRan();
  let accepted = 0;
  let rejected = 0;
  let n = 0;
  for await (const r of allRecords(store, runId)) {
    if (++n % 200 === 0) progress.tick?.();
    if (!candidates.has(r.fn.functionId)) continue;
    if (isClassRecord(r)) {
      if (r.accepted) classes.addAccepted(r.record);
      else classes.addRejected(r.fn.split, r.rejection.stage as FunctionStage);
      continue;
    }
    const split = (bySplit[r.fn.split] ??= { accepted: 0, rejected: 0 });
    addRoundsRan(rounds, r.accepted ? r.record : r.rejection);
    if (r.accepted) {
      accepted += 1;
      split.accepted += 1;
      funnel.add('accepted');
      statistics.add(r.record);
      strength.add(r.record);
      solvability.add(r.record);
    } else {
      rejected += 1;
      split.rejected += 1;
      funnel.add(r.rejection.stage as FunctionStage);
    }
  }
  const usage = new UsageCounter();
  const regenerations = emptyRefusals();
  for await (const e of store.listRunExchanges(runId)) {
    usage.add(e);
    addRefusal(regenerations, e);
    if (++n % 1000 === 0) progress.tick?.();
  }
  const { reached, rejectedAt } = funnel.result();
  const llm = usage.result();
  return {
    runId,
    repositories: repos.length,
    functions: accepted + rejected,
    accepted,
    rejected,
    funnel: reached,
    rejectedAt,
    rounds,
    bySplit,
    missingRecords: candidates.size - (accepted + rejected + classes.result().classes),
    skippedRepos: repos.filter((r) => r.outcome.skipped).map((r) => ({ source: r.outcome.source, reason: r.outcome.skipped! })),
    llm,
    regenerations,
    statistics: statistics.result(llm.total),
    testStrength: strength.result(),
    ...(classes.any ? { classes: classes.result() } : {}),
    solvability: solvability.result(rejectedAt.solvability ?? 0),
  };
}

/**
 * Writes `dataset.jsonl`, `rejections.jsonl`, `summary.json` and `run.json` of a run into `outDir`,
 * and for a run that made class environments `classes-dataset.jsonl` and
 * `classes-rejections.jsonl`, streaming the records from the store. Safe to call again: each file
 * is replaced atomically.
 */
export async function exportRunFiles(store: Store, runId: string, outDir: string, progress: Progress = {}): Promise<RunSummaryFile> {
  const run = await store.getRun(runId);
  if (!run) throw new Error(`no run ${runId} in the store at ${store.location}`);
  const p = runPaths(path.resolve(outDir));
  const candidates = await candidateIds(store, runId, progress);
  const summary = (run.summary as RunSummaryFile | undefined) ?? (await summarizeRun(store, runId, progress));
  const writers = [new JsonLinesWriter(p.dataset), new JsonLinesWriter(p.rejections)];
  const [dataset, rejections] = writers as [JsonLinesWriter, JsonLinesWriter];
  const classWriters = summary.classes ? { dataset: new JsonLinesWriter(p.classes), rejections: new JsonLinesWriter(p.classRejections) } : null;
  if (classWriters) writers.push(classWriters.dataset, classWriters.rejections);
  try {
    let n = 0;
    for await (const r of allRecords(store, runId)) {
      if (++n % 200 === 0) progress.tick?.();
      if (!candidates.has(r.fn.functionId)) continue;
      const out = isClassRecord(r) ? classWriters : { dataset, rejections };
      if (!out) continue;
      if (r.accepted) await out.dataset.write(r.record);
      else await out.rejections.write(r.rejection);
    }
    for (const w of writers) await w.close();
  } catch (err) {
    for (const w of writers) await w.abort();
    throw err;
  }
  await writeFileAtomic(p.summary, JSON.stringify(summary, null, 2) + '\n');
  const settings = await store.getJson(run.settingsKey);
  const sources = run.sourcesKey ? await store.getJson(run.sourcesKey) : [];
  await writeFileAtomic(p.run, JSON.stringify({ ...run, summary: undefined, settings, sourceList: sources }, null, 2) + '\n');
  return summary;
}
