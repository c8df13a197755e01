/**
 * Runs untrusted Python in the sandbox image: one script (plus files) per run, through a warm
 * pool of containers or, in strict mode, a fresh container per run. The parts, each in its file:
 * the run's request (run-request.ts), where its container comes from (containers.ts, over
 * warm-pool.ts and the isolation of container-spec.ts), its packages resolved in rounds
 * (package-resolution.ts, over package-store.ts and the import scan of import-scan.ts), the
 * harness's helpers and the run's result (harness-calls.ts), the AST comparisons (ast-checks.ts),
 * telling an out-of-memory kill (oom.ts), and sweeping what crashed workers left (sweep.ts).
 */
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import Docker from 'dockerode';
import { asOfCutoff } from './as-of';
import { astEquivalent, astNormalize } from './ast-checks';
import { SUPERVISOR_USER } from './container-spec';
import { SandboxContainers, type Borrowed } from './containers';
import { isDockerUnavailable } from './docker-errors';
import { startExec } from './docker-exec';
import { HARNESS_TIMEOUT_SEC, HarnessCalls, parseHarnessResult } from './harness-calls';
import { DIRTY_EXIT, DIRTY_MARKER, HARNESS_TIMEOUT_EXIT, launchCommand, mutationRunDeadlineSec, takeResultTrailer, type MutationSpec } from './harness-command';
import { ImportScanCache, ImportScanSchema, planImports, SCRIPT_FILE, type ImportPlan } from './import-scan';
import { RUN_GRACE_SEC } from './leftovers';
import { oomKilled } from './oom';
import { PackageResolution } from './package-resolution';
import { PackageStore, type EnsureResult, type PackageSet } from './package-store';
import { missingModuleName, parsePythonException } from './python-exception';
import {
  HEARTBEAT_MS,
  infrastructureResult,
  SandboxCancelledError,
  type RunHooks,
  type RunLimits,
  type RunRequest,
  type SandboxExecutorConfig,
  type SandboxExecutorOptions,
} from './run-request';
import { SandboxResultSchema, type AstComparison, type CandidateFailure, type AstNormalization, type CoverageReport, type MutationReport, type PythonException, type RunnerReport, type SandboxResult, type SandboxStatus } from './schema';
import { LeftoverSweep } from './sweep';
import { lendableAfter } from './warm-pool';

interface Attempt {
  result: SandboxResult;
  /** The module an uncaught ModuleNotFoundError named, as the harness saw it. */
  missingModule: string | null;
}

export class SandboxExecutor {
  readonly docker: Docker;
  readonly workerId: string;
  readonly packages: PackageStore;
  private readonly containers: SandboxContainers;
  private readonly harness: HarnessCalls;
  /** Import scans already read (see ImportScanCache): an evaluation's answers to one record share one. */
  private readonly scans = new ImportScanCache();
  private readonly sweep: LeftoverSweep;

  constructor(
    readonly config: SandboxExecutorConfig,
    private readonly options: SandboxExecutorOptions,
  ) {
    this.docker = options.docker ?? new Docker();
    this.workerId = config.workerId ?? `${os.hostname()}-${process.pid}`;
    this.packages = new PackageStore({
      docker: this.docker,
      image: options.image,
      root: options.packagesDir,
      workerId: this.workerId,
      settings: config.packages,
      limits: config,
    });
    this.containers = new SandboxContainers(this.docker, config, { image: options.image, envsDir: this.packages.envsDir, workerId: this.workerId });
    this.harness = new HarnessCalls(this.docker, this.containers);
    this.sweep = new LeftoverSweep(this.docker, config, this.workerId, this.packages);
  }

  get image(): string {
    return this.options.image;
  }

  get mode(): 'pool' | 'cold' {
    return this.containers.pool ? 'pool' : 'cold';
  }

  get poolStats() {
    return this.containers.pool?.stats ?? null;
  }

  /** Starts the pool's containers ahead of the first run (no-op in cold mode). */
  async warm(): Promise<void> {
    await this.containers.pool?.warm();
  }

  /**
   * Runs the script. With `install`, the packages its source imports (in any spelling: see
   * import-scan.ts) are installed first, in one resolution; a ModuleNotFoundError for a module the
   * source imports whose package is not installed yet adds it and the script runs again. Every
   * resolution is one round, at most `packages.resolutionRounds` per run.
   */
  async run(req: RunRequest, hooks: RunHooks = {}): Promise<SandboxResult> {
    const asOf = this.asOfOf(req);
    const packages = new PackageResolution(this.config.packages.resolutionRounds, (requirements) => this.install(requirements, hooks, asOf.cutoff));
    packages.notes.push(...asOf.notes);
    packages.wantRequirements(req.requirements ?? []);
    let plan: ImportPlan | null = null;
    if (req.install) {
      const scanned = await this.scanImports(req, hooks);
      if ('status' in scanned) return { ...scanned, notes: [...packages.notes, ...scanned.notes] };
      plan = scanned;
      packages.wantImports(plan);
    }

    const stopped = await packages.resolve();
    if (stopped) return stopped;
    let { result, missingModule } = await this.runOnce(req, packages.set, hooks);
    while (req.install && plan && (result.status === 'error' || result.status === 'failed')) {
      const next = await packages.installMissing(missingModule ?? missingModuleName(result.exception, result.stderr), plan, req.localModules);
      if (next === 'stop') break;
      if (next !== 'again') return next;
      ({ result, missingModule } = await this.runOnce(req, packages.set, hooks));
    }
    const installed = packages.set as PackageSet | null;
    return { ...result, requirements: installed?.requirements ?? [], notes: [...packages.notes, ...result.notes] };
  }

  /** The cutoff a run's packages are resolved as of (null: the newest releases), and a note when its date is unusable. */
  private asOfOf(req: RunRequest): { cutoff: string | null; notes: string[] } {
    if (!req.packagesAsOf) return { cutoff: null, notes: [] };
    const { date, graceSec = this.config.packages.asOfGraceSec } = req.packagesAsOf;
    const cutoff = asOfCutoff(date, graceSec);
    return cutoff ? { cutoff, notes: [] } : { cutoff: null, notes: [`the code's date ${JSON.stringify(date.slice(0, 40))} is not a date; packages at their newest releases`] };
  }

  /** Installs (or finds) a requirement set, heartbeating meanwhile; cancellation stops the install. */
  private async install(requirements: string[], hooks: RunHooks, asOf: string | null): Promise<EnsureResult> {
    hooks.heartbeat?.();
    const beat = hooks.heartbeat ? setInterval(hooks.heartbeat, HEARTBEAT_MS) : null;
    try {
      return await this.packages.ensure(requirements, { signal: hooks.signal, asOf });
    } finally {
      if (beat) clearInterval(beat);
      if (hooks.signal?.aborted) throw new SandboxCancelledError('sandbox run cancelled during a package install');
    }
  }

  /** The script's imports, read by the harness inside a sandbox container, as distributions. */
  private async scanImports(req: RunRequest, hooks: RunHooks): Promise<ImportPlan | SandboxResult> {
    const sources: Record<string, string> = { [SCRIPT_FILE]: req.script };
    for (const [name, text] of Object.entries(req.files ?? {})) if (name.endsWith('.py')) sources[name] = text;
    hooks.heartbeat?.();
    const beat = hooks.heartbeat ? setInterval(hooks.heartbeat, HEARTBEAT_MS) : null;
    try {
      const key = ImportScanCache.keyOf(sources);
      let scan = this.scans.get(key);
      if (!scan) {
        scan = ImportScanSchema.parse(await this.harness.json('imports.py', { sources }, HARNESS_TIMEOUT_SEC, hooks.signal));
        this.scans.set(key, scan);
      }
      return planImports(scan, { localModules: req.localModules, files: req.files });
    } catch (err) {
      if (hooks.signal?.aborted) throw new SandboxCancelledError('sandbox run cancelled while reading its imports');
      return infrastructureResult(`the imports of the script could not be read: ${(err as Error).message}`, []);
    } finally {
      if (beat) clearInterval(beat);
    }
  }

  /**
   * Mutation testing in one container run: the script as given (the ground truth placed), then
   * each mutant of `mutation.target`'s body, forked from one warm parent (see mutation.ts and
   * the harness's repost_mutation_run.py). Packages are installed as for `run`; the result is the
   * ground truth's run, with the mutants' outcomes in `mutation`.
   */
  async mutate(req: Omit<RunRequest, 'mutation' | 'coverage' | 'runner'>, mutation: MutationSpec, hooks: RunHooks = {}): Promise<SandboxResult> {
    return this.run({ ...req, mutation }, hooks);
  }

  /** AST equivalence of two function sources, computed by the harness inside the sandbox. */
  async astEquivalent(a: string, b: string): Promise<AstComparison> {
    return astEquivalent(this.harness, a, b);
  }

  /**
   * Python's `ast` round trip (parse, unparse) of each source, inside the sandbox: model output
   * is parsed by the interpreter that will run it, never on the host.
   */
  async astNormalize(sources: string[]): Promise<AstNormalization[]> {
    return astNormalize(this.harness, sources);
  }

  /** Removes the sandbox containers and install folders crashed workers left (sweep.ts). */
  async cleanupLeftovers(now: number = Date.now(), extraLabels: string[] = []): Promise<number> {
    return this.sweep.once(now, extraLabels);
  }

  /** Sweeps leftovers every `sweepIntervalSec` until `close()`. */
  startLeftoverSweep(onSwept?: (removed: number) => void): void {
    this.sweep.start(onSwept);
  }

  async close(): Promise<void> {
    this.sweep.stop();
    await this.containers.pool?.close();
  }

  /** One run; a container that turns out unclean is replaced and the run repeated on a fresh one. */
  private async runOnce(req: RunRequest, set: PackageSet | null, hooks: RunHooks): Promise<Attempt> {
    let attempt = await this.runAttempt(req, set, hooks);
    for (let retry = 0; retry < 2 && attempt.result.status === 'infrastructure' && attempt.result.notes.some((n) => n.startsWith(DIRTY_MARKER)); retry++) {
      attempt = await this.runAttempt(req, set, hooks);
    }
    return attempt;
  }

  private async runAttempt(req: RunRequest, set: PackageSet | null, hooks: RunHooks): Promise<Attempt> {
    const started = Date.now();
    const packages = set?.packages ?? [];
    const infrastructure = (message: string): Attempt => ({
      result: SandboxResultSchema.parse({
        status: 'infrastructure', exitCode: null, durationMs: Date.now() - started, stdout: '', stderr: '', truncated: false,
        exception: null, coverage: null, packages, notes: [message],
      }),
      missingModule: null,
    });
    if (hooks.signal?.aborted) throw new SandboxCancelledError('sandbox run cancelled before it started');

    const limits: RunLimits = { memoryMb: req.limits?.memoryMb ?? this.config.memoryMb, cpus: req.limits?.cpus ?? this.config.cpus, pidsLimit: req.limits?.pidsLimit ?? this.config.pidsLimit };
    let borrowed: Borrowed;
    try {
      borrowed = await this.containers.borrow(hooks.signal, limits);
      await this.containers.applyLimits(borrowed.container, limits).catch(async (err: Error) => {
        await borrowed.release(false);
        throw err;
      });
    } catch (err) {
      if (hooks.signal?.aborted) throw new SandboxCancelledError('sandbox run cancelled while waiting for a container');
      return infrastructure(`could not get a sandbox container: ${(err as Error).message}`);
    }

    // The run's duration is the script's: waiting for a container is not counted.
    const execStarted = Date.now();
    const runDir = `/scratch/run-${randomBytes(6).toString('hex')}`;
    const timeoutSec = req.timeoutSec ?? this.config.timeoutSec;
    let ended: 'timeout' | 'cancelled' | null = null;
    let heartbeat: NodeJS.Timeout | null = null;
    let timer: NodeJS.Timeout | null = null;
    let onAbort: (() => void) | null = null;
    let reusable = false;
    try {
      const handle = await startExec(this.docker, borrowed.container, {
        ...launchCommand({
          runDir, script: req.script, files: req.files ?? {}, coverage: req.coverage?.functionName ?? null, packageDir: set?.containerPath ?? null, timeoutSec, runner: req.runner,
          mutation: req.mutation, hashSeed: req.hashSeed, clockOffsetSec: req.clockOffsetSec, candidate: req.candidate ?? null, resultTrailer: true,
        }),
        user: SUPERVISOR_USER,
        workingDir: '/scratch',
        outputLimitBytes: this.config.outputLimitBytes,
      });
      // The harness ends the script at its limit; should it fail to, removing the container
      // a little later kills the whole process tree.
      const stop = (why: 'timeout' | 'cancelled') => {
        if (ended) return;
        ended = why;
        void borrowed.kill().finally(() => handle.abandon());
      };
      const limitSec = req.mutation ? mutationRunDeadlineSec(timeoutSec, req.mutation) : timeoutSec;
      timer = setTimeout(() => stop('timeout'), (limitSec + RUN_GRACE_SEC) * 1000);
      onAbort = () => stop('cancelled');
      hooks.signal?.addEventListener('abort', onAbort);
      if (hooks.heartbeat) heartbeat = setInterval(hooks.heartbeat, HEARTBEAT_MS);

      const { exitCode } = await handle.done;
      const durationMs = Date.now() - execStarted;
      if (ended === 'cancelled') throw new SandboxCancelledError('sandbox run cancelled; its container was removed');
      if (timer) clearTimeout(timer);

      // The supervisor's result ends its stdout (see takeResultTrailer): taken off before anyone reads stdout.
      const trailer = takeResultTrailer(handle.stdout);
      const stdout = handle.stdout.toString();
      const stderr = handle.stderr.toString();
      if (exitCode === DIRTY_EXIT && stderr.startsWith(DIRTY_MARKER)) {
        return infrastructure(stderr.trim());
      }
      if (exitCode === null && ended === null) {
        // The exec vanished under us: the container (or the engine) went away.
        throw Object.assign(new Error('the run ended without an exit status (its container is gone)'), { statusCode: 404 });
      }
      const truncated = handle.stdout.truncated || handle.stderr.truncated;
      const notes: string[] = [];
      let coverage: CoverageReport | null = null;
      let missingModule: string | null = null;
      let runner: RunnerReport | null = null;
      let mutation: MutationReport | null = null;
      let candidate: CandidateFailure | null = null;
      let oom = false;
      let timedOut = ended === 'timeout';
      /** Whether the supervisor's result was read: null when none was needed (it exited 0, no coverage asked). */
      let resultRead: boolean | null = null;
      if (ended === null && exitCode !== null) {
        // The result is written by the supervisor after every other process in the container is gone.
        const needResult = req.coverage !== undefined || req.runner !== undefined || req.mutation !== undefined || req.candidate !== undefined || exitCode !== 0;
        // From the stdout trailer, unless the exec ended by a signal (the supervisor may have been
        // killed before writing one, leaving the script's last bytes at the end): then the file.
        const harness = !needResult ? null : trailer !== null && exitCode < 128 ? parseHarnessResult(trailer) : await this.harness.runResult(borrowed.container, runDir);
        if (needResult) resultRead = harness !== null;
        if (needResult && !harness) notes.push('the supervisor left no result (it was killed or failed); this container is not lent again');
        if (harness?.verdict) notes.push(harness.verdict);
        runner = harness?.runner ?? null;
        mutation = harness?.mutation ?? null;
        candidate = harness?.candidate ?? null;
        if (req.coverage) {
          coverage = harness?.coverage ?? null;
          notes.push(...(harness?.notes ?? []));
        }
        missingModule = harness?.missingModule ?? null;
        if (harness?.timedOut && exitCode === HARNESS_TIMEOUT_EXIT) timedOut = true;
        if (exitCode === 137) oom = await oomKilled(this.docker, borrowed.container);
        // Killed by a signal with its container: the container was killed or removed under the run
        // (by hand, or the engine), which says nothing of the script. The run is tried again.
        if (!oom && exitCode >= 128 && !(await containerStillRunning(borrowed.container))) {
          throw Object.assign(new Error(`the run was killed with its container (exit ${exitCode}; the container is no longer running)`), { statusCode: 409 });
        }
      }
      const exception = exitCode === 0 ? null : parsePythonException(stderr);
      if (exception?.type === 'MemoryError') oom = true;
      const status = classify({ timedOut, exitCode, oom, exception, stderr });
      if (status === 'timeout') notes.push(`the run exceeded its ${timeoutSec}s time limit and was killed`);
      if (status === 'oom') notes.push(`the run exceeded its ${limits.memoryMb} MB memory limit`);
      // A mutant that hit the memory limit leaves the container's OOM history behind: not lent again.
      reusable = lendableAfter({ status, exitCode, resultRead }) && !mutation?.mutants.some((m) => m.kind === 'oom');
      return {
        result: SandboxResultSchema.parse({
          status,
          exitCode: status === 'timeout' ? null : exitCode,
          durationMs,
          stdout,
          stderr,
          truncated,
          exception: status === 'timeout' ? null : exception,
          coverage,
          packages,
          notes,
          runner,
          ...(req.mutation ? { mutation } : {}),
          ...(req.candidate ? { candidate } : {}),
        }),
        missingModule,
      };
    } catch (err) {
      if (err instanceof SandboxCancelledError) throw err;
      // A daemon restart stops every container: the idle ones in the pool are dead too.
      if (isDockerUnavailable(err)) this.containers.discardIdle();
      return infrastructure(`sandbox run failed: ${(err as Error).message}`);
    } finally {
      if (timer) clearTimeout(timer);
      if (heartbeat) clearInterval(heartbeat);
      if (onAbort) hooks.signal?.removeEventListener('abort', onAbort);
      await borrowed.release(reusable);
    }
  }
}

/** Whether the container still runs (false when it is gone or the engine does not say). */
/**
 * Whether the container still runs after a run ended by a signal. The engine marks a container it
 * has just killed as exited a moment after its processes die, so a container that still shows as
 * running is asked again for a short while before the signal is taken for the script's own.
 */
async function containerStillRunning(container: Docker.Container, settleMs = 300, stepMs = 50): Promise<boolean> {
  for (let waited = 0; ; waited += stepMs) {
    if (!(await containerRunning(container))) return false;
    if (waited >= settleMs) return true;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

async function containerRunning(container: Docker.Container): Promise<boolean> {
  try {
    return (await container.inspect()).State.Running === true;
  } catch {
    return false;
  }
}

function classify(r: { timedOut: boolean; exitCode: number | null; oom: boolean; exception: PythonException | null; stderr: string }): SandboxStatus {
  if (r.timedOut) return 'timeout';
  if (r.oom) return 'oom';
  if (r.exitCode === null) return 'infrastructure';
  if (r.exitCode === 0) return 'passed';
  if (r.exception?.type === 'AssertionError') return 'failed';
  // unittest.main(): only failures (no errors) means the assertions failed.
  if (/^FAILED \(failures=\d+\)$/m.test(r.stderr)) return 'failed';
  return 'error';
}
