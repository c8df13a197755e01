/**
 * What every evaluation activity (a function's, a class's) starts from: this worker's
 * configuration with the run's frozen settings laid over it, and the run's frozen evaluation
 * settings.
 */
import type { Config } from '../temporal.config';
import type { RunRef } from './contracts';
import { evalSettingsOfRun, type EvalSettings } from './eval/settings';
import { RunConfigs } from './run-context';
import type { Store } from './store/types';

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

