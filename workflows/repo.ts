/**
 * One repository: pin a snapshot, list the candidate functions (and, when the run makes class
 * environments, the sampled classes after them) into pages in the store, and run a
 * FunctionWorkflow child per function (a ClassWorkflow child per class) through a bounded sliding window that pulls the pages one
 * at a time. Every `continueAsNewAfter` children it continues as new at a page boundary, so the
 * history stays small however many functions the repository has. A child that fails becomes a
 * recorded outcome (stage `internal`) and the window goes on.
 */
import {
  ParentClosePolicy,
  continueAsNew,
  executeChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { CandidateList, FunctionOutcome, FunctionRef, PipelineSettings, RepoOutcome, RepoSnapshot, RepoSource, RunRef, TaskQueues } from '../activities/contracts';
import { activityProxies } from './activities';
import { failureText } from './failures';
import type { functionWorkflow } from './function';
import { boundedKeyword } from './ids';
import { RepoKey, RunIdKey } from './search-attributes';
import { workflowKind } from './target-kinds';
import { streamingWindow } from './window';

export interface RepoWorkflowInput {
  run: RunRef;
  source: RepoSource;
  /** Position of the repository in the run's source list. */
  index: number;
  settings: PipelineSettings;
  queues: TaskQueues;
  /** Carried across continue-as-new: the snapshot, its candidate pages, the next page, counts so far. */
  resume?: { snapshot: RepoSnapshot; candidates: CandidateList; nextPage: number; accepted: number; rejected: number };
}

/**
 * The repository's targets in one list of pages: its candidate functions (unless the run makes
 * classes only), then its sampled classes when the run makes class environments.
 */
async function listTargets(io: ReturnType<typeof activityProxies>['io'], settings: PipelineSettings, args: { run: RunRef; snapshot: RepoSnapshot; index: number; source: RepoSource }): Promise<CandidateList> {
  const targets = settings.targets ?? 'functions';
  const functions = targets === 'classes' ? null : await io.listCandidates(args);
  if (targets === 'functions') return functions!;
  const classes = await io.listClassCandidates(args);
  return {
    pageKeys: [...(functions?.pageKeys ?? []), ...classes.pageKeys],
    candidates: (functions?.candidates ?? 0) + classes.candidates,
    total: functions?.total ?? 0,
    dropped: functions?.dropped ?? 0,
    skippedFiles: functions?.skippedFiles ?? 0,
  };
}

export async function repoWorkflow(input: RepoWorkflowInput): Promise<RepoOutcome> {
  const { run, source, settings, queues, index } = input;
  const { io } = activityProxies(queues, settings);
  upsertSearchAttributes([{ key: RunIdKey, value: boundedKeyword(run.runId) }]);

  let snapshot: RepoSnapshot;
  let candidates: CandidateList;
  if (input.resume) {
    ({ snapshot, candidates } = input.resume);
  } else {
    const snap = await io.snapshotRepository({ run, source });
    if (!snap.ok) {
      const skipped: RepoOutcome = { repoId: null, source, skipped: snap.reason, candidates: 0, accepted: 0, rejected: 0 };
      await io.writeRepoOutcome({ run, index, outcome: skipped, candidates: null });
      return skipped;
    }
    snapshot = snap.snapshot;
    candidates = await listTargets(io, settings, { run, snapshot, index, source });
  }
  upsertSearchAttributes([{ key: RepoKey, value: boundedKeyword(snapshot.repoId) }]);

  let accepted = input.resume?.accepted ?? 0;
  let rejected = input.resume?.rejected ?? 0;
  let page = input.resume?.nextPage ?? 0;
  let buffered: FunctionRef[] = [];
  let started = 0;

  /** The next function, loading the next page when the buffer is empty; null at the end, or at a page boundary once it is time to continue as new. */
  const pull = async (): Promise<FunctionRef | null> => {
    while (buffered.length === 0) {
      if (page >= candidates.pageKeys.length) return null;
      if (started >= settings.continueAsNewAfter || workflowInfo().continueAsNewSuggested) return null;
      // Functions that already have a record in this run (a resumed run) are not run again.
      const loaded = await io.loadCandidatePage({ run, pageKey: candidates.pageKeys[page]! });
      page += 1;
      buffered = loaded.functions;
    }
    started += 1;
    return buffered.shift()!;
  };

  const runChild = async (fn: FunctionRef): Promise<void> => {
    let outcome: FunctionOutcome;
    try {
      const options = {
        taskQueue: queues.workflows,
        // Cancelling the repository cancels its functions; its time limit ends one that is stuck.
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        workflowExecutionTimeout: settings.timeouts.functionWorkflowMs,
      };
      // Ids and summaries readable in the UI (repository and qualified name), bounded, and the same on every re-run.
      const kind = workflowKind(fn);
      outcome = await executeChild<typeof functionWorkflow>(kind.workflowType, {
        ...options,
        workflowId: kind.workflowId(run.runId, fn),
        args: [{ run, fn, settings, queues }],
        staticSummary: kind.summary(fn),
      });
    } catch (err) {
      // One failure never ends the repository (docs/architecture.md, invariant 8): it is recorded with its reason.
      try {
        outcome = await io.writeFailedFunction({ run, fn, reason: `the function's workflow failed: ${failureText(err)}` });
      } catch {
        // Not even the failure could be written: the run's summary counts the record as missing.
        rejected += 1;
        return;
      }
    }
    if (outcome.accepted) accepted += 1;
    else rejected += 1;
  };

  await streamingWindow(pull, settings.functionWindow, runChild);

  if (page < candidates.pageKeys.length) {
    // Pages are left: continue as new with a fresh history (the window has drained).
    await continueAsNew<typeof repoWorkflow>({ ...input, resume: { snapshot, candidates, nextPage: page, accepted, rejected } });
  }
  const outcome: RepoOutcome = { repoId: snapshot.repoId, source, skipped: null, candidates: candidates.candidates, accepted, rejected };
  await io.writeRepoOutcome({ run, index, outcome, candidates });
  return outcome;
}
