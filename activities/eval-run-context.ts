/**
 * What the evaluation's activities share (eval-llm-activities.ts, eval-sandbox-activities.ts,
 * eval-io-activities.ts): their dependencies, this worker's configuration with a run's frozen
 * settings and its evaluation settings laid over it, and an item's stored record.
 */
import type { Config } from '../temporal.config';
import type { EvalItem } from './eval/contracts';
import type { StoredEvalRecord } from './eval/dataset';
import { evalSettingsOfRun, type EvalSettings } from './eval/settings';
import { RunConfigs } from './run-context';
import type { RunRef } from './contracts';
import type { Store } from './store/types';

/** The stored record an item names. */
export const recordOf = async (store: Store, item: EvalItem) => (await store.getJson<StoredEvalRecord>(item.recordKey)).record;

/**
 * What an evaluation activity works with: this worker's configuration with the run's frozen
 * settings laid over it (after checking the run lives in this worker's store), and the run's
 * frozen evaluation settings.
 */
export class EvalRunConfigs extends RunConfigs {
  /** Parsed once per stored settings artifact, which the base class keeps while the run is in use. */
  private readonly parsed = new WeakMap<object, EvalSettings>();

  /** The evaluation's own part of the run's frozen settings, with this worker's configuration under the run's. */
  async forEvalRun(run: RunRef): Promise<{ config: Config; settings: EvalSettings }> {
    const config = await this.forRun(run);
    const stored = (await this.storedSettings(run)) as object;
    let settings = this.parsed.get(stored);
    if (!settings) {
      // A crawl's evaluation settings are its solvability stage's.
      settings = evalSettingsOfRun(stored, run.runId, config);
      this.parsed.set(stored, settings);
    }
    return { config, settings };
  }
}

export interface EvalDependencies {
  config: Config;
  store: Store;
}
