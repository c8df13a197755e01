/**
 * Live-benchmark and report activities (task queue `io`): open a scheduled firing's run (GitHub
 * search by creation window) and write a finished run's report. Thin wrappers over
 * `benchmark/open-run.ts` and `report/write-report.ts`.
 */
import { log } from '@temporalio/activity';
import type { Config } from '../temporal.config';
import { dataPaths } from '../temporal.config';
import type { ArtifactStore } from './artifacts/store';
import { openBenchmarkRun } from './benchmark/open-run';
import { LocalRunReader } from './dataset/run-reader';
import { writeRunReport } from './report/write-report';
import { gitHubSourceFromConfig } from './sources';
import type { BenchmarkActivities } from './types';

export interface BenchmarkDependencies {
  config: Config;
  store: ArtifactStore;
}

export function createBenchmarkActivities({ config, store }: BenchmarkDependencies): BenchmarkActivities {
  return {
    async openBenchmarkRun(input) {
      return openBenchmarkRun(
        {
          store,
          runsDir: dataPaths(config).runs,
          github: () => gitHubSourceFromConfig(config, (m) => log.info(m)),
          llm: { baseURL: config.llm.baseURL, model: config.llm.model },
        },
        input,
      );
    },

    async writeRunReport({ run }) {
      const written = await writeRunReport(LocalRunReader.open(run.outDir, config.dataDir), run.outDir);
      return { file: written.file, records: written.records, rejections: written.rejections };
    },
  };
}
