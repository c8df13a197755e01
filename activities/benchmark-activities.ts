/**
 * Live-benchmark activities (task queue `io`): open a scheduled firing's run (GitHub search by
 * creation window, the run registered in the store). A thin wrapper over `benchmark/open-run.ts`;
 * the firing's crawl writes the run's files and report itself, as every crawl does.
 */
import * as path from 'node:path';
import { log } from '@temporalio/activity';
import type { Config } from '../temporal.config';
import { dataPaths } from '../temporal.config';
import { openBenchmarkRun } from './benchmark/open-run';
import { RunConfigs, whileHeartbeating } from './run-context';
import { gitHubSourceFromConfig } from './sources';
import type { Store } from './store/types';
import type { BenchmarkActivities } from './types';

export interface BenchmarkDependencies {
  config: Config;
  store: Store;
}

export function createBenchmarkActivities({ config, store }: BenchmarkDependencies): BenchmarkActivities {
  // Refuses (retryably) work of a schedule or run from another store, as every run activity does.
  const runs = new RunConfigs(config, store);
  return {
    async openBenchmarkRun(input) {
      await runs.forRun({ runId: input.scheduleId, settingsKey: input.settingsKey, storeId: input.storeId });
      const deps = {
        store,
        outDirOf: (runId: string) => path.join(dataPaths(config).runs, runId),
        github: () => gitHubSourceFromConfig(config, (m) => log.info(m)),
      };
      return whileHeartbeating(() => openBenchmarkRun(deps, input));
    },
  };
}
