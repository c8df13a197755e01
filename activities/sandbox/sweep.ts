/**
 * Sweeping leftovers: sandbox containers of a crashed worker (or any older than a live one can
 * be) and the temporary folders of crashed installs, removed at a worker's start and every
 * `sweepIntervalSec` (which containers are stale is decided in leftovers.ts).
 */
import * as os from 'node:os';
import type Docker from 'dockerode';
import { LABELS, PROCESS_TOKEN } from './container-spec';
import { removeContainer } from './containers';
import { leftoverAgeMs, staleContainers } from './leftovers';
import type { PackageStore } from './package-store';
import type { SandboxExecutorConfig } from './run-request';

export class LeftoverSweep {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly docker: Docker,
    private readonly config: SandboxExecutorConfig,
    private readonly workerId: string,
    private readonly packages: PackageStore,
  ) {}

  /**
   * Removes sandbox containers left behind (see leftovers.ts: this worker id's from an earlier
   * process, dead local processes', and any older than a live container can be, whatever its
   * worker), and temporary install folders of crashed installs. `extraLabels` narrows the sweep
   * (a test on an engine others share must not sweep their containers).
   */
  async once(now: number = Date.now(), extraLabels: string[] = []): Promise<number> {
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

  /** Sweeps every `sweepIntervalSec` until `stop()`; failures (the engine away) wait for the next sweep. */
  start(onSwept?: (removed: number) => void): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.once().then(
        (n) => n > 0 && onSwept?.(n),
        () => undefined,
      );
    }, this.config.sweepIntervalSec * 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
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
