/**
 * Write a run's report: one self-contained HTML page (no server, no network) with the funnel,
 * rejections by stage and reason, RepoST's Table 4 figures, histograms of coverage, script length,
 * tests and rounds, the LLM cost per accepted example, packages, and a table of records linking
 * each to its eval script and its LLM exchanges.
 *
 *   tsx scripts/report.ts RUN [--out DIR]
 *
 * RUN is a run id in the store (REPOST_STORE_URL, else the data directory) or a run's folder. The
 * page goes to the run's folder (or DIR) as report.html, its linked files to report/ beside it.
 * A run folder whose run is not in the store is reported from its files, without LLM exchanges.
 */
import * as path from 'node:path';
import { openRunReader } from '../activities/dataset/run-reader';
import { openStore } from '../activities/store';
import { writeRunReport } from '../activities/report/write-report';
import { dataPaths, loadConfig } from '../temporal.config';
import { runCommand } from './lib/cli';

runCommand({
  file: __filename,
  options: { out: { type: 'string' } },
  positionals: { min: 1, max: 1 },
  async run({ values, positionals: [run] }) {
    const config = loadConfig();
    const store = await openStore(config);
    try {
      const reader = await openRunReader(store, run!);
      const outDir = path.resolve(values.out ?? reader.outDir ?? path.join(dataPaths(config).runs, reader.runId));
      const written = await writeRunReport(reader, outDir);
      console.log(`report of run ${reader.runId}: ${written.file}`);
      console.log(`  ${written.records} record(s), ${written.rejections} rejection(s); ${written.scripts} script(s) and ${written.exchangePages} exchange page(s) under ${path.join(outDir, 'report')}/`);
      if (written.unreadableExchanges > 0) console.log(`  ${written.unreadableExchanges} recorded exchange(s) could not be read (named on their pages)`);
    } finally {
      await store.close();
    }
  },
});
