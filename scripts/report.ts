/**
 * Write a run's report: one self-contained HTML page (no server, no network) with the funnel,
 * rejections by stage and reason, RepoST's Table 4 figures, histograms of coverage, script length,
 * tests and rounds, the LLM cost per accepted example, packages, and a table of records linking
 * each to its eval script and its LLM exchanges.
 *
 *   tsx scripts/report.ts RUN [--out DIR]
 *
 * RUN is a run folder or a run id under the data directory (REPOST_DATA_DIR, default .data).
 * The page goes to RUN/report.html (or DIR/report.html), its linked files to report/ beside it.
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { LocalRunReader } from '../activities/dataset/run-reader';
import { writeRunReport } from '../activities/report/write-report';
import { loadConfig } from '../temporal.config';
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
  const reader = LocalRunReader.open(flags.run, config.dataDir);
  const written = await writeRunReport(reader, path.resolve(flags.out ?? reader.location));
  console.log(`report of run ${reader.runId}: ${written.file}`);
  console.log(`  ${written.records} record(s), ${written.rejections} rejection(s); ${written.scripts} script(s) and ${written.exchangePages} exchange page(s) under ${path.join(path.dirname(written.file), 'report')}/`);
  if (written.unreadableExchanges > 0) console.log(`  ${written.unreadableExchanges} recorded exchange(s) could not be read (named on their pages)`);
  return 0;
}

runCli(main);
