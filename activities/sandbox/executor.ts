/**
 * Runs untrusted Python in the sandbox image: one script (plus files) per run, through a warm
 * pool of containers or, in strict mode, a fresh container per run. See container-spec.ts for
 * the isolation, warm-pool.ts for reuse, package-cache.ts for third-party packages.
 */
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import Docker from 'dockerode';
import type { Config } from '../../temporal.config';
import { LABELS, PROCESS_TOKEN, SCRIPT_USER, runContainerOptions, type ContainerRole } from './container-spec';
import { startExec } from './docker-exec';
import { DIRTY_EXIT, DIRTY_MARKER, jsonHarnessCommand, launchCommand } from './harness-command';
import { validateRequirement } from './install-commands';
import { PackageCache, type PackageSet } from './package-cache';
import { distributionForImport, normalizeDistributionName } from './packages';
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
  type SandboxResult,
  type SandboxStatus,
} from './schema';
import { WarmPool, type Lease } from './warm-pool';

export interface RunRequest {
  script: string;
  /** Extra files written next to the script (relative paths inside the run directory). */
  files?: Record<string, string>;
  timeoutSec?: number;
  /** Measure this function's span: `foo_new_implementation`, `foo` or `Class.method`. */
  coverage?: { functionName: string };
  /** Install missing third-party modules (ModuleNotFoundError) and run again. */
  install?: boolean;
  /** Requirements known up front (e.g. accepted LLM install lines); installed before the first run. */
  requirements?: string[];
  /**
   * Top-level module names of the repository the script came from. A missing one is the
   * script's fault (the code should have been carried into it), never a package to install:
   * a same-named PyPI project would only hide the mistake.
   */
  localModules?: string[];
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

const HEARTBEAT_MS = 5000;
/** Limit of a JSON harness request (the AST comparison, the AST normalisation). */
const HARNESS_TIMEOUT_SEC = 30;

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
  readonly packages: PackageCache;

  constructor(
    readonly config: SandboxExecutorConfig,
    private readonly options: SandboxExecutorOptions,
  ) {
    this.docker = options.docker ?? new Docker();
    this.workerId = config.workerId ?? `${os.hostname()}-${process.pid}`;
    this.packages = new PackageCache({
      docker: this.docker,
      image: options.image,
      packagesDir: options.packagesDir,
      workerId: this.workerId,
      installTimeoutSec: config.installTimeoutSec,
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
   * Runs the script; with `install`, each ModuleNotFoundError is mapped to a distribution,
   * installed (at most `maxInstallsPerScript` times) and the script run again.
   */
  async run(req: RunRequest, hooks: RunHooks = {}): Promise<SandboxResult> {
    const notes: string[] = [];
    let requirements: string[] = [];
    for (const r of req.requirements ?? []) {
      if (validateRequirement(r)) requirements.push(r);
      else notes.push(`requirement ${JSON.stringify(r)} ignored: not a package name with an optional version`);
    }
    let set: PackageSet | null = null;
    if (requirements.length > 0) {
      const ensured = await this.install(requirements, hooks);
      if (ensured.ok) set = ensured.set;
      else {
        // Suggested up front but not installable: start bare and install what the run shows it needs.
        notes.push(ensured.error);
        requirements = [];
      }
    }
    let result = await this.runOnce(req, set, hooks);
    let installs = 0;
    while (req.install && (result.status === 'error' || result.status === 'failed')) {
      const missing = missingModuleName(result.exception, result.stderr);
      if (!missing) break;
      if (req.localModules?.includes(missing.split('.')[0]!)) {
        notes.push(`module ${missing} belongs to the repository, not to a package: the script must carry that code itself`);
        break;
      }
      const distribution = distributionForImport(missing);
      if (!distribution) {
        notes.push(`module ${missing} is missing but is not installable (standard library or invalid name)`);
        break;
      }
      const wanted = normalizeDistributionName(distribution);
      if (requirements.some((r) => normalizeDistributionName(r.split(/[[<>=!~]/)[0]!) === wanted)) {
        notes.push(`module ${missing} is still missing after installing ${distribution}`);
        break;
      }
      if (installs >= this.config.maxInstallsPerScript) {
        notes.push(`module ${missing} is missing; the limit of ${this.config.maxInstallsPerScript} installs per script is reached`);
        break;
      }
      installs += 1;
      requirements.push(distribution);
      const ensured = await this.install(requirements, hooks);
      if (!ensured.ok) {
        notes.push(`installing ${distribution} for module ${missing} failed: ${ensured.error}`);
        break;
      }
      set = ensured.set;
      notes.push(`installed ${distribution} for module ${missing}`);
      result = await this.runOnce(req, set, hooks);
    }
    return { ...result, requirements: set?.requirements ?? [], notes: [...notes, ...result.notes] };
  }

  /** Installs (or finds cached) a requirement set, heartbeating meanwhile; cancellation is checked after. */
  private async install(requirements: string[], hooks: RunHooks) {
    hooks.heartbeat?.();
    const beat = hooks.heartbeat ? setInterval(hooks.heartbeat, HEARTBEAT_MS) : null;
    try {
      return await this.packages.ensure(requirements);
    } finally {
      if (beat) clearInterval(beat);
      if (hooks.signal?.aborted) throw new SandboxCancelledError('sandbox run cancelled during a package install');
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

  /** Runs a JSON-in, JSON-out harness script in a borrowed container, killed after `timeoutSec`. */
  private async harnessJson(script: string, request: unknown, timeoutSec: number): Promise<unknown> {
    const borrowed = await this.borrow();
    let reusable = false;
    try {
      const handle = await startExec(this.docker, borrowed.container, {
        ...jsonHarnessCommand(script, request),
        user: SCRIPT_USER,
        outputLimitBytes: 4 * 1024 * 1024,
      });
      const timer = setTimeout(() => void borrowed.kill(), timeoutSec * 1000);
      const { exitCode } = await handle.done;
      clearTimeout(timer);
      if (exitCode !== 0) throw new Error(`${script} failed (exit ${exitCode}): ${handle.stderr.toString().slice(-2000)}`);
      reusable = true;
      return JSON.parse(handle.stdout.toString());
    } finally {
      await borrowed.release(reusable);
    }
  }

  /**
   * Removes sandbox containers a previous incarnation left behind: those of this worker id made
   * by another process, and those of any worker whose process on this host is gone.
   */
  async cleanupLeftovers(): Promise<number> {
    const containers = await this.docker.listContainers({ all: true, filters: { label: [`${LABELS.sandbox}=1`] } });
    const host = os.hostname();
    const stale = containers.filter((c) => {
      const token = c.Labels[LABELS.process] ?? '';
      if (token === PROCESS_TOKEN) return false;
      if (c.Labels[LABELS.worker] === this.workerId) return true;
      const [tokenHost, pid] = token.split(':');
      return tokenHost === host && !processAlive(Number(pid));
    });
    await Promise.all(stale.map((c) => removeContainer(this.docker.getContainer(c.Id))));
    this.packages.removeAbandonedInstalls();
    return stale.length;
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }

  private async createContainer(role: ContainerRole): Promise<Docker.Container> {
    const container = await this.docker.createContainer(
      runContainerOptions({ image: this.options.image, limits: this.config, packagesDir: this.options.packagesDir, workerId: this.workerId, role }),
    );
    try {
      await container.start();
    } catch (err) {
      await removeContainer(container);
      throw err;
    }
    return container;
  }

  private async borrow(signal?: AbortSignal): Promise<Borrowed> {
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
    const container = await this.createContainer('cold');
    let removal: Promise<void> | null = null;
    const remove = () => (removal ??= removeContainer(container));
    // Strict mode pays for the removal inside the run: nothing of it outlives the run.
    return { container, release: () => remove(), kill: () => remove() };
  }

  /** One run; a container that turns out unclean is replaced and the run repeated on a fresh one. */
  private async runOnce(req: RunRequest, set: PackageSet | null, hooks: RunHooks): Promise<SandboxResult> {
    let result = await this.runAttempt(req, set, hooks);
    for (let retry = 0; retry < 2 && result.status === 'infrastructure' && result.notes.some((n) => n.startsWith(DIRTY_MARKER)); retry++) {
      result = await this.runAttempt(req, set, hooks);
    }
    return result;
  }

  private async runAttempt(req: RunRequest, set: PackageSet | null, hooks: RunHooks): Promise<SandboxResult> {
    const started = Date.now();
    const packages = set?.packages ?? [];
    const infrastructure = (message: string): SandboxResult =>
      SandboxResultSchema.parse({
        status: 'infrastructure', exitCode: null, durationMs: Date.now() - started, stdout: '', stderr: '', truncated: false,
        exception: null, coverage: null, packages, notes: [message],
      });
    if (hooks.signal?.aborted) throw new SandboxCancelledError('sandbox run cancelled before it started');

    let borrowed: Borrowed;
    try {
      borrowed = await this.borrow(hooks.signal);
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
        ...launchCommand({ runDir, script: req.script, files: req.files ?? {}, coverage: req.coverage?.functionName ?? null, packageDir: set?.containerPath ?? null }),
        user: SCRIPT_USER,
        workingDir: '/scratch',
        outputLimitBytes: this.config.outputLimitBytes,
      });
      // Ending a run early removes its container: the whole process tree dies with it.
      const stop = (why: 'timeout' | 'cancelled') => {
        if (ended) return;
        ended = why;
        void borrowed.kill().finally(() => handle.abandon());
      };
      timer = setTimeout(() => stop('timeout'), timeoutSec * 1000);
      onAbort = () => stop('cancelled');
      hooks.signal?.addEventListener('abort', onAbort);
      if (hooks.heartbeat) heartbeat = setInterval(hooks.heartbeat, HEARTBEAT_MS);

      const { exitCode } = await handle.done;
      const durationMs = Date.now() - execStarted;
      if (ended === 'cancelled') throw new SandboxCancelledError('sandbox run cancelled; its container was removed');

      const stdout = handle.stdout.toString();
      const stderr = handle.stderr.toString();
      if (exitCode === DIRTY_EXIT && stderr.startsWith(DIRTY_MARKER)) {
        return infrastructure(stderr.trim());
      }
      const truncated = handle.stdout.truncated || handle.stderr.truncated;
      const notes: string[] = [];
      let coverage: CoverageReport | null = null;
      let oom = false;
      if (ended !== 'timeout' && exitCode !== null) {
        if (req.coverage) {
          const harness = await this.readHarnessResult(borrowed.container, runDir);
          coverage = harness?.coverage ?? null;
          notes.push(...(harness?.notes ?? ['the harness left no result (the script ended its own process)']));
        }
        if (exitCode === 137) oom = await this.oomKilled(borrowed.container);
      }
      const exception = exitCode === 0 ? null : parsePythonException(stderr);
      if (exception?.type === 'MemoryError') oom = true;
      const status = classify({ ended, exitCode, oom, exception, stderr });
      if (status === 'timeout') notes.push(`the run exceeded its ${timeoutSec}s time limit and was killed`);
      if (status === 'oom') notes.push(`the run exceeded its ${this.config.memoryMb} MB memory limit`);
      if (status === 'infrastructure') notes.push('the sandbox lost track of the run (no exit status)');
      reusable = status !== 'timeout' && status !== 'oom' && status !== 'infrastructure';
      return SandboxResultSchema.parse({
        status,
        exitCode: ended === 'timeout' ? null : exitCode,
        durationMs,
        stdout,
        stderr,
        truncated,
        exception,
        coverage,
        packages,
        notes,
      });
    } catch (err) {
      if (err instanceof SandboxCancelledError) throw err;
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
      cmd: ['cat', `${runDir}/.repost-result.json`],
      user: SCRIPT_USER,
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

function classify(r: { ended: 'timeout' | 'cancelled' | null; exitCode: number | null; oom: boolean; exception: PythonException | null; stderr: string }): SandboxStatus {
  if (r.ended === 'timeout') return 'timeout';
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
