/**
 * A run as a command names it: a run id in the store, or a run's folder (one holding summary.json),
 * the same for every command that reads a run (`status`, `replay`, `report`, `export`, `classes`).
 */
import { locateRun, RunNotFoundError, type FolderRunReader } from '../../activities/dataset/run-reader';
import { runIdProblem, type Store } from '../../activities/store/types';
import { UsageError } from './cli';

export interface NamedRun {
  runId: string;
  /** The store holds the run (a folder named is its own folder). */
  inStore: boolean;
  /** The folder, when the run was named by one. */
  folder: FolderRunReader | null;
}

/** The run `arg` names; a name that is neither a run id nor a run folder is bad usage, a run id the store lacks is no run. */
export async function namedRun(store: Store, arg: string): Promise<NamedRun> {
  const run = await locateRun(store, arg);
  if (run) return run;
  const problem = runIdProblem(arg);
  if (problem) throw new UsageError(`${problem}; nor is it a run folder (one holding summary.json)`);
  throw new RunNotFoundError(`no run ${arg}: neither a run id in the store at ${store.location} nor a run folder (one holding summary.json)`);
}
