/**
 * Export a run's accepted records as a Hugging Face dataset folder: one Parquet file per split
 * under data/ (the class environments, when the run made any, under data/classes/ as the
 * `classes` configuration) and a README.md dataset card (YAML front matter with configs, features, splits and
 * licenses; RepoST's Table 4 figures; the run's settings and prompt versions). The folder loads
 * with `datasets.load_dataset(DIR)` and can be pushed to the Hub as it is.
 *
 *   tsx scripts/export.ts RUN --to DIR
 *
 * RUN is a run id in the store (REPOST_STORE_URL, else the data directory) or a run's folder.
 * DIR must be new, empty, or an earlier export, proven by the marker the exporter writes into each
 * (`.repost-export.json`); it is replaced once the new one is complete. Anything else is refused.
 */
import { openRunReader } from '../activities/dataset/run-reader';
import { openStore } from '../activities/store';
import { exportRun } from '../activities/export/export-run';
import { loadConfig } from '../temporal.config';
import { runCommand, UsageError } from './lib/cli';

runCommand({
  file: __filename,
  options: { to: { type: 'string' } },
  positionals: { min: 1, max: 1 },
  async run({ values, positionals: [run] }) {
    if (!values.to) throw new UsageError('give the folder to write: --to DIR');
    const store = await openStore(loadConfig());
    try {
      const reader = await openRunReader(store, run!);
      const result = await exportRun(reader, values.to);
      console.log(`exported run ${reader.runId} to ${result.dir}/`);
      for (const s of result.splits) console.log(`  ${s.path}: ${s.rows} row(s) (${s.name})`);
      for (const s of result.classSplits ?? []) console.log(`  ${s.path}: ${s.rows} class environment(s) (${s.name}, configuration classes)`);
      console.log(`  README.md: the dataset card`);
    } finally {
      await store.close();
    }
  },
});
