/**
 * What every activity needs before it works on a run: the run's frozen settings applied over this
 * worker's configuration, after checking that the run lives in this worker's store; and the
 * activity's heartbeat and cancellation signal, to hand to whatever the activity waits on.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Config } from '../temporal.config';
import type { RunRef } from './contracts';
import { applyRunSettings, RunSettingsSchema, type RunSettings } from './run-settings';
import type { Store } from './store/types';

/** Kept per process: a crawl has one settings artifact, a replay perhaps a second. */
const MAX_CACHED_SETTINGS = 32;

interface FrozenRun {
  raw: unknown;
  settings: RunSettings;
  config: Config;
}

export class RunConfigs {
  /** Per settings artifact: the run's settings and this worker's configuration with them laid over. */
  private readonly cache = new Map<string, Promise<FrozenRun>>();

  constructor(
    private readonly config: Config,
    private readonly store: Store,
  ) {}

  /**
   * The configuration to use for this run's work. A run from another store is refused with a
   * retryable failure, so a worker pointed at the right store picks the task up instead.
   */
  async forRun(run: RunRef): Promise<Config> {
    return (await this.frozen(run)).config;
  }

  /**
   * Refuses, with a retryable failure, a prompt whose template version is not the one the run
   * froze: another worker with the run's templates can do the call; this one must not mix versions.
   */
  async checkPromptVersion(run: RunRef, kind: string, version: string): Promise<void> {
    const wanted = (await this.frozen(run)).settings.promptVersions[kind];
    if (wanted && wanted !== version) {
      throw ApplicationFailure.retryable(`run ${run.runId} uses prompt ${kind} v${wanted}, this worker has v${version}`, 'PromptVersionMismatch');
    }
  }

  /** The run's settings artifact as stored (it may hold more than `RunSettings`, e.g. an evaluation's settings). */
  protected async storedSettings(run: RunRef): Promise<unknown> {
    return (await this.frozen(run)).raw;
  }

  private async frozen(run: RunRef): Promise<FrozenRun> {
    const mine = await this.store.storeId();
    if (run.storeId !== mine) {
      throw ApplicationFailure.retryable(
        `run ${run.runId} lives in store ${run.storeId}, but this worker uses ${mine} (${this.store.location}): start the worker with the run's REPOST_STORE_URL`,
        'StoreMismatch',
      );
    }
    let entry = this.cache.get(run.settingsKey);
    if (!entry) {
      entry = this.store.getJson(run.settingsKey).then((raw) => {
        const settings = RunSettingsSchema.parse(raw);
        return { raw, settings, config: applyRunSettings(this.config, settings) };
      });
      entry.catch(() => this.cache.delete(run.settingsKey));
      this.cache.set(run.settingsKey, entry);
      while (this.cache.size > MAX_CACHED_SETTINGS) this.cache.delete(this.cache.keys().next().value!);
    }
    return entry;
  }
}

/**
 * Heartbeats every second while `work` runs, for waits that do not heartbeat themselves (long
 * snapshots, analyses, summaries, harness calls); outside an activity it just runs `work`.
 */
export async function whileHeartbeating<T>(work: () => Promise<T>): Promise<T> {
  const { heartbeat } = activityHooks();
  if (!heartbeat) return work();
  heartbeat();
  const timer = setInterval(heartbeat, 1000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** The running activity's heartbeat and cancellation signal (none outside an activity, e.g. in unit tests). */
export function activityHooks(): { heartbeat?: () => void; signal?: AbortSignal } {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return {};
  }
  return { heartbeat: () => ctx.heartbeat(), signal: ctx.cancellationSignal };
}
