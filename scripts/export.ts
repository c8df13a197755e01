/**
 * Export a run's accepted records as a Hugging Face dataset folder: one Parquet file per split
 * under data/ and a README.md dataset card (YAML front matter with configs, features, splits and
 * licenses; RepoST's Table 4 figures; the run's settings and prompt versions). The folder loads
 * with `datasets.load_dataset(DIR)` and can be pushed to the Hub as it is.
 *
 *   tsx scripts/export.ts RUN --to DIR
 *
 * RUN is a run id in the store (REPOST_STORE_URL, else the data directory) or a run's folder.
 * DIR must be new, empty, or an earlier export, proven by the marker the exporter writes into each
 * (`.repost-export.json`); it is replaced once the new one is complete. Anything else is refused.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { openRunReader } from '../activities/dataset/run-reader';
import { openStore } from '../activities/store';
import { ExportError, exportRun } from '../activities/export/export-run';
import { loadConfig } from '../temporal.config';
import { UsageError, runCli, usageOf } from './lib/cli';

const FlagsSchema = z.object({
  run: z.string().min(1),
  to: z.string().min(1, 'give the folder to write (--to DIR)'),
});

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({ options: { to: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  if (values.help) {
    console.log(usageOf(__filename));
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(positionals.length ? `one run at a time (got ${positionals.length})` : 'give a run folder or a run id');
  if (!values.to) throw new UsageError('give the folder to write: --to DIR');
  const flags = FlagsSchema.parse({ run: positionals[0], to: values.to });
  const store = await openStore(loadConfig());
  try {
    const reader = await openRunReader(store, flags.run);
    const result = await exportRun(reader, flags.to);
    console.log(`exported run ${reader.runId} to ${result.dir}/`);
    for (const s of result.splits) console.log(`  ${s.path}: ${s.rows} row(s) (${s.name})`);
    console.log(`  README.md: the dataset card`);
    return 0;
  } catch (err) {
    if (err instanceof ExportError) {
      console.error(err.message);
      return 1;
    }
    throw err;
  } finally {
    await store.close();
  }
}

runCli(main);
