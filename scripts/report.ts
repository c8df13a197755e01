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
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { openRunReader } from '../activities/dataset/run-reader';
import { openStore } from '../activities/store';
import { writeRunReport } from '../activities/report/write-report';
import { dataPaths, loadConfig } from '../temporal.config';
import { UsageError, runCli, usageOf } from './lib/cli';

const FlagsSchema = z.object({
  run: z.string().min(1),
  out: z.string().min(1).optional(),
  help: z.boolean().default(false),
});

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({ options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  if (values.help) {
    console.log(usageOf(__filename));
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(positionals.length ? `one run at a time (got ${positionals.length})` : 'give a run folder or a run id');
  const flags = FlagsSchema.parse({ ...values, run: positionals[0] });
  const config = loadConfig();
  const store = await openStore(config);
  try {
    const reader = await openRunReader(store, flags.run);
    const outDir = path.resolve(flags.out ?? reader.outDir ?? path.join(dataPaths(config).runs, reader.runId));
    const written = await writeRunReport(reader, outDir);
    console.log(`report of run ${reader.runId}: ${written.file}`);
    console.log(`  ${written.records} record(s), ${written.rejections} rejection(s); ${written.scripts} script(s) and ${written.exchangePages} exchange page(s) under ${path.join(outDir, 'report')}/`);
    if (written.unreadableExchanges > 0) console.log(`  ${written.unreadableExchanges} recorded exchange(s) could not be read (named on their pages)`);
    return 0;
  } finally {
    await store.close();
  }
}

runCli(main);
