/**
 * Export a run's accepted records as a Hugging Face dataset folder: one Parquet file per split
 * under data/ (the class environments, when the run made any, under data/classes/ as the
 * `classes` configuration) and a README.md dataset card (YAML front matter with configs, features, splits and
 * licenses; RepoST's Table 4 figures; the run's settings and prompt versions). The folder loads
 * with `datasets.load_dataset(DIR)` and can be pushed to the Hub as it is.
 *
 *   tsx scripts/export.ts RUN --out DIR
 *   tsx scripts/export.ts RUN --out DIR --format harbor [--save-image]
 *
 * RUN is a run id in the store (REPOST_STORE_URL, else the data directory) or a run's folder.
 * `--to DIR`, the flag's former name, still works and warns. DIR must be new, empty, or an earlier export, proven by the marker the exporter writes into each
 * (`.repost-export.json`); it is replaced once the new one is complete. Anything else is refused.
 *
 * `--format harbor` writes a Harbor dataset folder instead (activities/export/harbor.ts, docs/harbor.md):
 * one task per accepted function record and per class environment, its environment built FROM the sandbox image (the one
 * `REPOST_SANDBOX_IMAGE` names, else this checkout's); `--save-image` also writes that image with
 * `docker save` to DIR/images/sandbox-image.tar, for machines that cannot build it.
 */
import { openRunReader } from '../activities/dataset/run-reader';
import { openStore } from '../activities/store';
import { exportRun } from '../activities/export/export-run';
import { exportHarbor } from '../activities/export/harbor';
import { ensureSandboxImage } from '../sandbox-image/build';
import { saveImage } from './lib/save-image';
import { loadConfig } from '../temporal.config';
import { runCommand, UsageError } from './lib/cli';

runCommand({
  file: __filename,
  options: { out: { type: 'string' }, to: { type: 'string' }, format: { type: 'string' }, 'save-image': { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  async run({ values: given, positionals: [run] }) {
    // `--out` is the output folder in every command; `--to` was this one's name for it.
    if (given.to !== undefined && given.out !== undefined) throw new UsageError('give the folder once: --out DIR (--to is its former name)');
    if (given.to !== undefined) console.error('export: warning: --to is deprecated; use --out');
    const values = { ...given, to: given.out ?? given.to };
    if (!values.to) throw new UsageError('give the folder to write: --out DIR');
    const format = values.format ?? 'hf';
    if (format !== 'hf' && format !== 'harbor') throw new UsageError(`--format is hf (a Hugging Face dataset folder, the default) or harbor, not ${JSON.stringify(format).slice(0, 40)}`);
    const config = loadConfig();
    const store = await openStore(config);
    try {
      const reader = await openRunReader(store, run!);
      if (format === 'harbor') {
        const image = config.sandbox.image ?? (await ensureSandboxImage({ log: (m) => console.error(m) })).tag;
        const result = await exportHarbor(reader, values.to, { image, memoryMb: config.sandbox.memoryMb, cpus: config.sandbox.cpus, timeoutSec: config.sandbox.timeoutSec });
        console.log(`exported run ${reader.runId} to ${result.dir}/ as a Harbor dataset: ${result.tasks.length} task(s)${result.classes ? ` (${result.classes} of them class environments)` : ''}, FROM ${image}`);
        if (values['save-image']) console.log(`  ${await saveImage(image, result.dir)}: the sandbox image (docker load -i it on another machine)`);
        return;
      }
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
