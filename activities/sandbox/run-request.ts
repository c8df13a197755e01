/**
 * What a sandbox run is asked and how it ends when the sandbox itself fails: the request, the
 * run's limits and hooks, the executor's settings, a cancellation, an infrastructure result.
 */
import type Docker from 'dockerode';
import type { Config } from '../../temporal.config';
import type { SandboxLimits } from './container-spec';
import type { CandidateSpec, MutationSpec, RunnerSpec } from './harness-command';
import { SandboxResultSchema, type SandboxResult } from './schema';

export interface RunRequest {
  script: string;
  /** Extra files written next to the script (relative paths inside the run directory). */
  files?: Record<string, string>;
  timeoutSec?: number;
  /** Measure this function's span: `foo_new_implementation`, `foo` or `Class.method`. */
  coverage?: { functionName: string };
  /**
   * Memory, CPU and process limits of this run (a run's frozen settings); default the executor's.
   * A warm container is updated to them before the run when they differ from its own.
   */
  limits?: RunLimits;
  /**
   * Install the packages the script's source imports before the first run (read with Python's
   * `ast`), and after a ModuleNotFoundError for a module the source imports, run again.
   */
  install?: boolean;
  /** Requirements known up front (e.g. accepted LLM install lines); installed before the first run. */
  requirements?: string[];
  /**
   * The date of the code the script comes from (its commit's, ISO 8601): its packages are resolved
   * as of that date plus `graceSec` (default: the executor's `packages.asOfGraceSec`), see as-of.ts.
   * Unset: the newest releases.
   */
  packagesAsOf?: { date: string; graceSec?: number };
  /**
   * Run the harness's test runner: the script is loaded as a module and each snippet runs against
   * it; the results come back in `SandboxResult.runner` (never read from the script's output).
   */
  runner?: RunnerSpec;
  /**
   * Top-level module names of the repository the script came from. A missing one is the
   * script's fault (the code should have been carried into it), never a package to install:
   * a same-named PyPI project would only hide the mistake.
   */
  localModules?: string[];
  /** Mutation testing of the script's target (see `SandboxExecutor.mutate`); the result's status is the script's own run. */
  mutation?: MutationSpec;
  /** The script's PYTHONHASHSEED (stability runs); unset: a random one, as Python chooses. */
  hashSeed?: number;
  /** Shift the script's wall clock (`time`, `datetime`) by this many seconds (stability runs). */
  clockOffsetSec?: number;
  /**
   * An isolated run: the candidate runs in a process of its own (another uid, no report channel, no
   * copy of the ground truth) and the script's `<name>_new_implementation` calls it there; the
   * script is `IsolatedPlacement.script`, the candidate `IsolatedPlacement.module`.
   */
  candidate?: CandidateSpec;
}

export type RunLimits = Pick<SandboxLimits, 'memoryMb' | 'cpus' | 'pidsLimit'>;

/** A run's limits from a (run's) sandbox configuration. */
export function runLimitsOf(sandbox: Pick<Config['sandbox'], 'memoryMb' | 'cpus' | 'pidsLimit'>): RunLimits {
  return { memoryMb: sandbox.memoryMb, cpus: sandbox.cpus, pidsLimit: sandbox.pidsLimit };
}

export interface RunHooks {
  heartbeat?: () => void;
  signal?: AbortSignal;
}

export type SandboxExecutorConfig = Config['sandbox'] & {
  /** Stamped on containers so a restarted worker finds its predecessor's leftovers. */
  workerId?: string;
  /** Strict mode: one fresh container per run even if the pool is enabled in the config. */
  strict?: boolean;
};

export interface SandboxExecutorOptions {
  docker?: Docker;
  image: string;
  packagesDir: string;
}

/** Thrown when a run is cancelled through its AbortSignal (after its container was removed). */
export class SandboxCancelledError extends Error {
  override name = 'SandboxCancelledError';
}

/** How often a long wait (an install, an import scan, a run) heartbeats. */
export const HEARTBEAT_MS = 5000;

/** A run that could not happen for a reason of the sandbox's own (not the script's): Temporal retries it. */
export function infrastructureResult(message: string, notes: string[]): SandboxResult {
  return SandboxResultSchema.parse({
    status: 'infrastructure', exitCode: null, durationMs: 0, stdout: '', stderr: '', truncated: false,
    exception: null, coverage: null, packages: [], notes: [...notes, message],
  });
}
