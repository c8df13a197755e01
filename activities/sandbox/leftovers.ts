/**
 * Which sandbox containers are leftovers: this process's own that a daemon restart stopped,
 * those of this worker id made by an earlier process,
 * those of a process on this host that is gone, and, whatever the worker, every one older than
 * the longest a live container can be (pool containers are recycled by age, runs and builds have
 * time limits), which catches what a crashed worker on another host left on a shared engine.
 */
import type { Config } from '../../temporal.config';
import { LABELS } from './container-spec';

/** Time the executor gives a run beyond its limit before removing its container (the harness ends it first). */
export const RUN_GRACE_SEC = 10;
/** Margin on top of the longest legitimate container life before a sweep by age removes one. */
const SWEEP_MARGIN_SEC = 300;

export interface LabelledContainer {
  Id: string;
  /** `running`, `exited`, `created`, ... */
  State?: string;
  /** Seconds since the epoch, as the engine reports it. */
  Created: number;
  Labels: Record<string, string>;
}

type LifeLimits = Pick<Config['sandbox'], 'timeoutSec'> & { pool: Pick<Config['sandbox']['pool'], 'maxAgeSec'>; packages: Pick<Config['sandbox']['packages'], 'installTimeoutSec'> };

/** The age past which no live sandbox container can be: pool life plus the longest run or build in it, plus a margin. */
export function leftoverAgeMs(limits: LifeLimits): number {
  return (limits.pool.maxAgeSec + Math.max(limits.timeoutSec + RUN_GRACE_SEC, limits.packages.installTimeoutSec) + SWEEP_MARGIN_SEC) * 1000;
}

export function staleContainers(
  containers: LabelledContainer[],
  me: { workerId: string; processToken: string; host: string; now: number; maxAgeMs: number; processAlive: (pid: number) => boolean },
): LabelledContainer[] {
  return containers.filter((c) => {
    const token = c.Labels[LABELS.process] ?? '';
    // This process's own: only those a daemon restart stopped (their removal failed meanwhile).
    if (token === me.processToken) return c.State === 'exited' || c.State === 'dead';
    if (me.now - c.Created * 1000 > me.maxAgeMs) return true;
    if (c.Labels[LABELS.worker] === me.workerId) return true;
    const [tokenHost, pid] = token.split(':');
    return tokenHost === me.host && !me.processAlive(Number(pid));
  });
}
