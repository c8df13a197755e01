/**
 * Live-benchmark and run-output activities (task queue `io`): open a scheduled firing's run
 * (GitHub search by creation window, the run registered in the store) and write a finished run's
 * files and report into its folder. Thin wrappers over `benchmark/open-run.ts`,
 * `dataset/run-files.ts` and `report/write-report.ts`.
 */
import * as path from 'node:path';
import { log } from '@temporalio/activity';
import type { Config } from '../temporal.config';
import { dataPaths } from '../temporal.config';
import { openBenchmarkRun } from './benchmark/open-run';
import { exportRunFiles } from './dataset/run-files';
import { StoreRunReader } from './dataset/run-reader';
import { RunConfigs, whileHeartbeating } from './run-context';
import { writeRunReport } from './report/write-report';
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

    async writeRunOutputs({ run, outDir }) {
      await runs.forRun(run);
      const { runId } = run;
      return whileHeartbeating(async () => {
        await exportRunFiles(store, runId, outDir);
        const written = await writeRunReport(await StoreRunReader.open(store, runId), outDir);
        return { report: written.file, records: written.records, rejections: written.rejections };
      });
    },
  };
}
