/**
 * Runs untrusted Python in the sandbox image: one script (plus files) per run, through a warm
 * pool of containers or, in strict mode, a fresh container per run. See container-spec.ts for
 * the isolation, warm-pool.ts for reuse, package-store.ts for third-party packages and
 * import-scan.ts for how a script's packages are found before it runs.
 */
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import Docker from 'dockerode';
import type { Config } from '../../temporal.config';
import { LABELS, PROCESS_TOKEN, SCRIPT_USER, SUPERVISOR_USER, runContainerOptions, type ContainerRole, type SandboxLimits } from './container-spec';
import { isDockerUnavailable } from './docker-errors';
import { startExec } from './docker-exec';
import { DIRTY_EXIT, DIRTY_MARKER, HARNESS_TIMEOUT_EXIT, harnessResultPath, helperCommand, launchCommand, type HarnessHelper, type RunnerSpec } from './harness-command';
import { ImportScanSchema, importedDistribution, planImports, type ImportPlan } from './import-scan';
import { validateRequirement } from './install-commands';
import { isPermanent } from './install-failure';
import { RUN_GRACE_SEC, leftoverAgeMs, staleContainers } from './leftovers';
import { PackageStore, requirementName, type EnsureResult, type PackageSet } from './package-store';
import { distributionForImport } from './packages';
import { missingModuleName, parsePythonException } from './python-exception';
import {
  AstComparisonSchema,
  AstNormalizationSchema,
  HarnessResultSchema,
  SandboxResultSchema,
  type AstComparison,
  type AstNormalization,
  type CoverageReport,
  type PythonException,
  type RunnerReport,
  type SandboxResult,
  type SandboxStatus,
} from './schema';
import { WarmPool, lendableAfter, type Lease } from './warm-pool';

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

/** The supervisor found its container unclean before running a helper; it is replaced and the helper run again. */
class DirtyContainerError extends Error {}

const HEARTBEAT_MS = 5000;
/** In-container limit of the import scan, the AST comparison and the AST normalisation. */
const HARNESS_TIMEOUT_SEC = 30;

interface Attempt {
  result: SandboxResult;
  /** The module an uncaught ModuleNotFoundError named, as the harness saw it. */
  missingModule: string | null;
}

interface Borrowed {
  container: Docker.Container;
  /** Gives the container back (pool) or removes it (cold); `reusable: false` always removes it. */
  release(reusable: boolean): Promise<void>;
  /** Removes the container now (timeout, cancellation): every process in it dies. */
  kill(): Promise<void>;
}

export class SandboxExecutor {
  readonly docker: Docker;
  readonly workerId: string;
  private readonly pool: WarmPool | null;
  readonly packages: PackageStore;
  private sweepTimer: NodeJS.Timeout | null = null;

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
    this.pool =
      config.pool.enabled && !config.strict
        ? new WarmPool(
            {
              create: () => this.createContainer('pool'),
              destroy: (c) => removeContainer(c),
            },
            config.pool.size,
            config.pool.recycleAfterRuns,
            config.pool.maxAgeSec * 1000,
          )
        : null;
  }

  get image(): string {
    return this.options.image;
  }

  get mode(): 'pool' | 'cold' {
    return this.pool ? 'pool' : 'cold';
  }

  get poolStats() {
    return this.pool?.stats ?? null;
  }

  /** Starts the pool's containers ahead of the first run (no-op in cold mode). */
  async warm(): Promise<void> {
    await this.pool?.warm();
  }

  /**
   * Runs the script. With `install`, the packages its source imports are installed first, in one
   * resolution; a ModuleNotFoundError for a module the source imports (a guarded or literal
   * dynamic import, or one whose package was dropped) adds it and the script runs again. Every
   * resolution is one round, at most `packages.resolutionRounds` per run.
   */
  async run(req: RunRequest, hooks: RunHooks = {}): Promise<SandboxResult> {
    const notes: string[] = [];
    const wanted = new Map<string, { requirement: string; optional: boolean }>();
    for (const r of req.requirements ?? []) {
      const valid = validateRequirement(r);
      if (valid) wanted.set(requirementName(valid), { requirement: valid, optional: false });
      else notes.push(`requirement ${JSON.stringify(r)} ignored: not a package name with an optional version`);
    }
    let plan: ImportPlan | null = null;
    if (req.install) {
      const scanned = await this.scanImports(req, hooks);
      if ('status' in scanned) return { ...scanned, notes: [...notes, ...scanned.notes] };
      plan = scanned;
      notes.push(...plan.notes);
      for (const d of plan.required) if (!wanted.has(requirementName(d))) wanted.set(requirementName(d), { requirement: d, optional: false });
      for (const d of plan.optional) if (!wanted.has(requirementName(d))) wanted.set(requirementName(d), { requirement: d, optional: true });
    }

    let rounds = 0;
    let exhausted = false;
    let set: PackageSet | null = null;
    const tried = new Set<string>(wanted.keys());
    /** Resolves `wanted`, dropping what cannot be installed, one round per resolution. Null: go on; a result: stop with it. */
    const resolve = async (): Promise<SandboxResult | null> => {
      while (wanted.size > 0) {
        if (rounds >= this.config.packages.resolutionRounds) {
          // The last set that installed stays; what came after it is left out.
          const current = set as PackageSet | null;
          const have = new Set((current?.requirements ?? []).map(requirementName));
          const missing = [...wanted.entries()].filter(([k]) => !have.has(k));
          for (const [k] of missing) wanted.delete(k);
          notes.push(`the limit of ${this.config.packages.resolutionRounds} resolution rounds per script is reached; running without ${missing.map(([, w]) => w.requirement).join(' ')}`);
          exhausted = true;
          return null;
        }
        rounds += 1;
        const requirements = [...wanted.values()].map((w) => w.requirement);
        const ensured = await this.install(requirements, hooks);
        if (ensured.ok) {
          set = ensured.set;
          notes.push(...ensured.set.notes);
          return null;
        }
        const { failure } = ensured;
        if (!isPermanent(failure)) {
          // Time, disk, network or the engine: not the script's fault, and a later attempt may succeed.
          return this.infrastructureResult(`package install failed: ${ensured.error}`, [...notes]);
        }
        const named = failure.packages.filter((p) => wanted.has(p));
        const dropped = named.length > 0 ? named : [...wanted.entries()].filter(([, w]) => w.optional).map(([k]) => k);
        if (dropped.length === 0) {
          notes.push(`${ensured.error}; running without packages`);
          set = null;
          return null;
        }
        for (const name of dropped) {
          const entry = wanted.get(name)!;
          wanted.delete(name);
          notes.push(`${entry.optional ? 'optional package' : 'package'} ${entry.requirement} not installed: ${failure.message}`);
        }
      }
      set = null;
      return null;
    };

    const stopped = await resolve();
    if (stopped) return stopped;
    let { result, missingModule } = await this.runOnce(req, set, hooks);
    while (req.install && plan && (result.status === 'error' || result.status === 'failed')) {
      const missing = missingModule ?? missingModuleName(result.exception, result.stderr);
      if (!missing) break;
      const top = missing.split('.')[0]!;
      if (req.localModules?.includes(top)) {
        notes.push(`module ${missing} belongs to the repository, not to a package: the script must carry that code itself`);
        break;
      }
      const distribution = importedDistribution(plan, missing);
      if (!distribution) {
        notes.push(
          distributionForImport(missing)
            ? `module ${missing} is missing; the script's source does not import it, so no package is installed for it`
            : `module ${missing} is missing but is not installable (standard library or invalid name)`,
        );
        break;
      }
      const name = requirementName(distribution);
      if (tried.has(name)) {
        notes.push(`module ${missing} is still missing after trying to install ${distribution}`);
        break;
      }
      tried.add(name);
      wanted.set(name, { requirement: distribution, optional: false });
      const stop = await resolve();
      if (stop) return stop;
      if (exhausted || !wanted.has(name)) break; // it could not be installed: the notes say why
      notes.push(`installed ${distribution} for module ${missing}`);
      ({ result, missingModule } = await this.runOnce(req, set, hooks));
    }
    const installed = set as PackageSet | null;
    return { ...result, requirements: installed?.requirements ?? [], notes: [...notes, ...result.notes] };
  }

  /** Installs (or finds) a requirement set, heartbeating meanwhile; cancellation stops the install. */
  private async install(requirements: string[], hooks: RunHooks): Promise<EnsureResult> {
    hooks.heartbeat?.();
    const beat = hooks.heartbeat ? setInterval(hooks.heartbeat, HEARTBEAT_MS) : null;
    try {
      return await this.packages.ensure(requirements, { signal: hooks.signal });
    } finally {
      if (beat) clearInterval(beat);
      if (hooks.signal?.aborted) throw new SandboxCancelledError('sandbox run cancelled during a package install');
    }
  }

  /** The script's imports, read by the harness inside a sandbox container, as distributions. */
  private async scanImports(req: RunRequest, hooks: RunHooks): Promise<ImportPlan | SandboxResult> {
    const sources: Record<string, string> = { 'eval_script.py': req.script };
    for (const [name, text] of Object.entries(req.files ?? {})) if (name.endsWith('.py')) sources[name] = text;
    hooks.heartbeat?.();
    const beat = hooks.heartbeat ? setInterval(hooks.heartbeat, HEARTBEAT_MS) : null;
    try {
      const out = await this.harnessJson('imports.py', { sources }, HARNESS_TIMEOUT_SEC, hooks.signal);
      return planImports(ImportScanSchema.parse(out), { localModules: req.localModules, files: req.files });
    } catch (err) {
      if (hooks.signal?.aborted) throw new SandboxCancelledError('sandbox run cancelled while reading its imports');
      return this.infrastructureResult(`the imports of the script could not be read: ${(err as Error).message}`, []);
    } finally {
      if (beat) clearInterval(beat);
    }
  }

  private infrastructureResult(message: string, notes: string[]): SandboxResult {
    return SandboxResultSchema.parse({
      status: 'infrastructure', exitCode: null, durationMs: 0, stdout: '', stderr: '', truncated: false,
      exception: null, coverage: null, packages: [], notes: [...notes, message],
    });
  }

  /**
   * Runs a JSON-in, JSON-out harness helper through the supervisor in a borrowed container: the
   * same cleaning as a script first (a container found unclean is replaced and the helper run
   * again), killed in the container after `timeoutSec`.
   */
  private async harnessJson(helper: HarnessHelper, request: unknown, timeoutSec: number, signal?: AbortSignal): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.harnessJsonOnce(helper, request, timeoutSec, signal);
      } catch (err) {
        if (!(err instanceof DirtyContainerError) || attempt >= 2) throw err;
      }
    }
  }

  private async harnessJsonOnce(helper: HarnessHelper, request: unknown, timeoutSec: number, signal?: AbortSignal): Promise<unknown> {
    const borrowed = await this.borrow(signal);
    let reusable = false;
    try {
      const handle = await startExec(this.docker, borrowed.container, {
        ...helperCommand(helper, request, timeoutSec),
        user: SUPERVISOR_USER,
        outputLimitBytes: 4 * 1024 * 1024,
      });
      const timer = setTimeout(() => void borrowed.kill(), (timeoutSec + RUN_GRACE_SEC) * 1000);
      const onAbort = () => void borrowed.kill();
      signal?.addEventListener('abort', onAbort);
      const { exitCode } = await handle.done.finally(() => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      });
      if (exitCode === DIRTY_EXIT && handle.stderr.toString().startsWith(DIRTY_MARKER)) throw new DirtyContainerError(handle.stderr.toString().trim());
      if (exitCode !== 0) throw new Error(`${helper} failed (exit ${exitCode}): ${handle.stderr.toString().slice(-2000)}`);
      reusable = true;
      return JSON.parse(handle.stdout.toString());
    } catch (err) {
      if (isDockerUnavailable(err)) this.pool?.discardIdle();
      throw err;
    } finally {
      await borrowed.release(reusable);
    }
  }

  /** AST equivalence of two function sources, computed by the harness inside the sandbox. */
  async astEquivalent(a: string, b: string): Promise<AstComparison> {
    return AstComparisonSchema.parse(await this.harnessJson('ast_equiv.py', { a, b }, HARNESS_TIMEOUT_SEC));
  }

  /**
   * Python's `ast` round trip (parse, unparse) of each source, inside the sandbox: model output
   * is parsed by the interpreter that will run it, never on the host.
   */
  async astNormalize(sources: string[]): Promise<AstNormalization[]> {
    return AstNormalizationSchema.parse(await this.harnessJson('ast_normalize.py', { sources }, HARNESS_TIMEOUT_SEC)).results;
  }

  /**
   * Removes sandbox containers left behind (see leftovers.ts: this worker id's from an earlier
   * process, dead local processes', and any older than a live container can be, whatever its
   * worker), and temporary install folders of crashed installs. `extraLabels` narrows the sweep
   * (a test on an engine others share must not sweep their containers).
   */
  async cleanupLeftovers(now: number = Date.now(), extraLabels: string[] = []): Promise<number> {
    const containers = await this.docker.listContainers({ all: true, filters: { label: [`${LABELS.sandbox}=1`, ...extraLabels] } });
    const stale = staleContainers(containers, {
      workerId: this.workerId,
      processToken: PROCESS_TOKEN,
      host: os.hostname(),
      now,
      maxAgeMs: leftoverAgeMs(this.config),
      processAlive,
    });
    await Promise.all(stale.map((c) => removeContainer(this.docker.getContainer(c.Id)).catch(() => undefined)));
    this.packages.removeAbandonedInstalls();
    return stale.length;
  }

  /** Sweeps leftovers every `sweepIntervalSec` until `close()`; failures (the engine away) wait for the next sweep. */
  startLeftoverSweep(onSwept?: (removed: number) => void): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(() => {
      this.cleanupLeftovers().then(
        (n) => n > 0 && onSwept?.(n),
        () => undefined,
      );
    }, this.config.sweepIntervalSec * 1000);
    this.sweepTimer.unref();
  }

  async close(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    await this.pool?.close();
  }

  /** The limits each live container has now (set at creation, changed by `applyLimits`). */
  private readonly containerLimits = new WeakMap<Docker.Container, RunLimits>();

  private async createContainer(role: ContainerRole, limits: RunLimits = this.config): Promise<Docker.Container> {
    const container = await this.docker.createContainer(
      runContainerOptions({ image: this.options.image, limits: { ...this.config, ...limits }, envsDir: this.packages.envsDir, workerId: this.workerId, role }),
    );
    this.containerLimits.set(container, { memoryMb: limits.memoryMb, cpus: limits.cpus, pidsLimit: limits.pidsLimit });
    try {
      await container.start();
    } catch (err) {
      await removeContainer(container);
      throw err;
    }
    return container;
  }

  /** Gives a warm container the run's limits when its own differ (`docker update`, no restart). */
  private async applyLimits(container: Docker.Container, limits: RunLimits): Promise<void> {
    const now = this.containerLimits.get(container);
    if (now && now.memoryMb === limits.memoryMb && now.cpus === limits.cpus && now.pidsLimit === limits.pidsLimit) return;
    const MiB = 1024 * 1024;
    await container.update({ Memory: limits.memoryMb * MiB, MemorySwap: limits.memoryMb * MiB, NanoCpus: Math.round(limits.cpus * 1e9), PidsLimit: limits.pidsLimit });
    this.containerLimits.set(container, { ...limits });
  }

  private async borrow(signal?: AbortSignal, limits: RunLimits = this.config): Promise<Borrowed> {
    if (this.pool) {
      const pool = this.pool;
      const lease: Lease = await pool.acquire(signal);
      let released = false;
      return {
        container: lease.container,
        release: async (reusable) => {
          if (released) return;
          released = true;
          pool.release(lease, reusable);
        },
        kill: async () => {
          if (!released) {
            released = true;
            pool.release(lease, false);
          }
          await removeContainer(lease.container);
        },
      };
    }
    const container = await this.createContainer('cold', limits);
    let removal: Promise<void> | null = null;
    const remove = () => (removal ??= removeContainer(container));
    // Strict mode pays for the removal inside the run: nothing of it outlives the run.
    return { container, release: () => remove(), kill: () => remove() };
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
      borrowed = await this.borrow(hooks.signal, limits);
      await this.applyLimits(borrowed.container, limits).catch(async (err: Error) => {
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
        ...launchCommand({ runDir, script: req.script, files: req.files ?? {}, coverage: req.coverage?.functionName ?? null, packageDir: set?.containerPath ?? null, timeoutSec, runner: req.runner }),
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
      timer = setTimeout(() => stop('timeout'), (timeoutSec + RUN_GRACE_SEC) * 1000);
      onAbort = () => stop('cancelled');
      hooks.signal?.addEventListener('abort', onAbort);
      if (hooks.heartbeat) heartbeat = setInterval(hooks.heartbeat, HEARTBEAT_MS);

      const { exitCode } = await handle.done;
      const durationMs = Date.now() - execStarted;
      if (ended === 'cancelled') throw new SandboxCancelledError('sandbox run cancelled; its container was removed');
      if (timer) clearTimeout(timer);

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
      let oom = false;
      let timedOut = ended === 'timeout';
      /** Whether the supervisor's result was read: null when none was needed (it exited 0, no coverage asked). */
      let resultRead: boolean | null = null;
      if (ended === null && exitCode !== null) {
        // The result is written by the supervisor after every other process in the container is gone.
        const needResult = req.coverage !== undefined || req.runner !== undefined || exitCode !== 0;
        const harness = needResult ? await this.readHarnessResult(borrowed.container, runDir) : null;
        if (needResult) resultRead = harness !== null;
        if (needResult && !harness) notes.push('the supervisor left no result (it was killed or failed); this container is not lent again');
        if (harness?.verdict) notes.push(harness.verdict);
        runner = harness?.runner ?? null;
        if (req.coverage) {
          coverage = harness?.coverage ?? null;
          notes.push(...(harness?.notes ?? []));
        }
        missingModule = harness?.missingModule ?? null;
        if (harness?.timedOut && exitCode === HARNESS_TIMEOUT_EXIT) timedOut = true;
        if (exitCode === 137) oom = await this.oomKilled(borrowed.container);
      }
      const exception = exitCode === 0 ? null : parsePythonException(stderr);
      if (exception?.type === 'MemoryError') oom = true;
      const status = classify({ timedOut, exitCode, oom, exception, stderr });
      if (status === 'timeout') notes.push(`the run exceeded its ${timeoutSec}s time limit and was killed`);
      if (status === 'oom') notes.push(`the run exceeded its ${limits.memoryMb} MB memory limit`);
      reusable = lendableAfter({ status, exitCode, resultRead });
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
        }),
        missingModule,
      };
    } catch (err) {
      if (err instanceof SandboxCancelledError) throw err;
      // A daemon restart stops every container: the idle ones in the pool are dead too.
      if (isDockerUnavailable(err)) this.pool?.discardIdle();
      return infrastructure(`sandbox run failed: ${(err as Error).message}`);
    } finally {
      if (timer) clearTimeout(timer);
      if (heartbeat) clearInterval(heartbeat);
      if (onAbort) hooks.signal?.removeEventListener('abort', onAbort);
      await borrowed.release(reusable);
    }
  }

  private async readHarnessResult(container: Docker.Container, runDir: string) {
    const handle = await startExec(this.docker, container, {
      cmd: ['cat', harnessResultPath(runDir)],
      user: SUPERVISOR_USER,
      outputLimitBytes: 8 * 1024 * 1024,
    });
    const { exitCode } = await handle.done;
    if (exitCode !== 0) return null;
    const parsed = HarnessResultSchema.safeParse(safeJson(handle.stdout.toString()));
    return parsed.success ? parsed.data : null;
  }

  /** Was the last SIGKILL the kernel's OOM killer? Reads the container's cgroup counter. */
  private async oomKilled(container: Docker.Container): Promise<boolean> {
    try {
      const handle = await startExec(this.docker, container, {
        cmd: ['sh', '-c', 'cat /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null || cat /sys/fs/cgroup/memory.events'],
        user: SCRIPT_USER,
        outputLimitBytes: 64 * 1024,
      });
      await handle.done;
      const m = /^oom_kill (\d+)/m.exec(handle.stdout.toString());
      return m !== null && Number(m[1]) > 0;
    } catch {
      return false;
    }
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

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function removeContainer(container: Docker.Container): Promise<void> {
  try {
    await container.remove({ force: true, v: true });
  } catch (err) {
    const code = (err as { statusCode?: number }).statusCode;
    // 404: already gone; 409: removal already in progress.
    if (code !== 404 && code !== 409) throw err;
  }
}
