/**
 * Calls into the harness inside a sandbox container that are not a script's run: a JSON-in,
 * JSON-out helper (the import scan, the AST comparison and normalisation) run through the
 * supervisor, and reading the result the supervisor leaves after a run.
 */
import type Docker from 'dockerode';
import { SUPERVISOR_USER } from './container-spec';
import type { SandboxContainers } from './containers';
import { isDockerUnavailable } from './docker-errors';
import { startExec } from './docker-exec';
import { DIRTY_EXIT, DIRTY_MARKER, harnessResultPath, helperCommand, type HarnessHelper } from './harness-command';
import { RUN_GRACE_SEC } from './leftovers';
import { HarnessResultSchema } from './schema';

/** In-container limit of the import scan, the AST comparison and the AST normalisation. */
export const HARNESS_TIMEOUT_SEC = 30;

/** The supervisor found its container unclean before running a helper; it is replaced and the helper run again. */
class DirtyContainerError extends Error {}

export class HarnessCalls {
  constructor(
    private readonly docker: Docker,
    private readonly containers: SandboxContainers,
  ) {}

  /**
   * Runs a JSON-in, JSON-out harness helper through the supervisor in a borrowed container: the
   * same cleaning as a script first (a container found unclean is replaced and the helper run
   * again), killed in the container after `timeoutSec`.
   */
  async json(helper: HarnessHelper, request: unknown, timeoutSec: number, signal?: AbortSignal): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.jsonOnce(helper, request, timeoutSec, signal);
      } catch (err) {
        if (!(err instanceof DirtyContainerError) || attempt >= 2) throw err;
      }
    }
  }

  private async jsonOnce(helper: HarnessHelper, request: unknown, timeoutSec: number, signal?: AbortSignal): Promise<unknown> {
    const borrowed = await this.containers.borrow(signal);
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
      if (isDockerUnavailable(err)) this.containers.discardIdle();
      throw err;
    } finally {
      await borrowed.release(reusable);
    }
  }

  /** The result the supervisor wrote after a run (null when there is none, or it does not parse). */
  async runResult(container: Docker.Container, runDir: string) {
    const handle = await startExec(this.docker, container, {
      cmd: ['cat', harnessResultPath(runDir)],
      user: SUPERVISOR_USER,
      outputLimitBytes: 8 * 1024 * 1024,
    });
    const { exitCode } = await handle.done;
    if (exitCode !== 0) return null;
    return parseHarnessResult(handle.stdout.toString());
  }
}

/** The supervisor's result from its JSON text (null when it does not parse or fit the schema). */
export function parseHarnessResult(text: string) {
  const parsed = HarnessResultSchema.safeParse(safeJson(text));
  return parsed.success ? parsed.data : null;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
