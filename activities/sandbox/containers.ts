/**
 * Where a run's container comes from: a lease from the warm pool, or in strict mode a fresh
 * container that is removed when the run ends. A warm container gets the run's limits first
 * (`docker update`, no restart) when its own differ.
 */
import Docker from 'dockerode';
import { runContainerOptions, type ContainerRole } from './container-spec';
import type { RunLimits, SandboxExecutorConfig } from './run-request';
import { WarmPool, type Lease } from './warm-pool';

/** A container lent to one run or helper. */
export interface Borrowed {
  container: Docker.Container;
  /** Gives the container back (pool) or removes it (cold); `reusable: false` always removes it. */
  release(reusable: boolean): Promise<void>;
  /** Removes the container now (timeout, cancellation): every process in it dies. */
  kill(): Promise<void>;
}

export class SandboxContainers {
  readonly pool: WarmPool | null;
  /** The limits each live container has now (set at creation, changed by `applyLimits`). */
  private readonly containerLimits = new WeakMap<Docker.Container, RunLimits>();

  constructor(
    private readonly docker: Docker,
    private readonly config: SandboxExecutorConfig,
    private readonly place: { image: string; envsDir: string; workerId: string },
  ) {
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

  async createContainer(role: ContainerRole, limits: RunLimits = this.config): Promise<Docker.Container> {
    const container = await this.docker.createContainer(
      runContainerOptions({ image: this.place.image, limits: { ...this.config, ...limits }, envsDir: this.place.envsDir, workerId: this.place.workerId, role }),
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
  async applyLimits(container: Docker.Container, limits: RunLimits): Promise<void> {
    const now = this.containerLimits.get(container);
    if (now && now.memoryMb === limits.memoryMb && now.cpus === limits.cpus && now.pidsLimit === limits.pidsLimit) return;
    const MiB = 1024 * 1024;
    await container.update({ Memory: limits.memoryMb * MiB, MemorySwap: limits.memoryMb * MiB, NanoCpus: Math.round(limits.cpus * 1e9), PidsLimit: limits.pidsLimit });
    this.containerLimits.set(container, { ...limits });
  }

  async borrow(signal?: AbortSignal, limits: RunLimits = this.config): Promise<Borrowed> {
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

  /** After the engine went away (a restart stops every container), the idle ones are dead too. */
  discardIdle(): void {
    this.pool?.discardIdle();
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
