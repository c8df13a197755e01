/**
 * Replay rejected functions of a finished run: each runs again as a FunctionWorkflow with the
 * current configuration, its record is replaced (never duplicated), and the run's dataset,
 * rejections and summary are assembled again.
 *
 *   tsx scripts/replay.ts --run RUN_ID|RUN_DIR [--stage STAGE ...] [--function ID ...] [--dry-run]
 *
 * Answers already obtained are served from the LLM cache, so a replay costs tokens only where the
 * prompts change (for example with more debug rounds, another model, or fixed infrastructure).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { loadConfig, dataPaths } from '../temporal.config';
import { rejectedToReplay, replayRejected } from './lib/replay';
import { startStack } from './lib/stack';

const FlagsSchema = z.object({
  run: z.string().min(1),
  stage: z.array(z.string()).default([]),
  function: z.array(z.string()).default([]),
  'dry-run': z.boolean().default(false),
});

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { run: { type: 'string' }, stage: { type: 'string', multiple: true }, function: { type: 'string', multiple: true }, 'dry-run': { type: 'boolean' } },
    strict: true,
  });
  const flags = FlagsSchema.parse(values);
  const config = loadConfig();
  const outDir = fs.existsSync(flags.run) ? path.resolve(flags.run) : path.join(dataPaths(config).runs, flags.run);
  const runFile = path.join(outDir, 'run.json');
  if (!fs.existsSync(runFile)) throw new Error(`no run at ${outDir} (run.json missing)`);
  const runId = z.object({ runId: z.string() }).parse(JSON.parse(fs.readFileSync(runFile, 'utf8'))).runId;

  const filter = { stages: flags.stage, functionIds: flags.function };
  const chosen = await rejectedToReplay(outDir, filter);
  console.log(`${chosen.length} rejected function(s) of run ${runId} to replay`);
  for (const r of chosen) console.log(`  ${r.fn.functionId} ${r.fn.path}::${r.fn.qualname} (${r.rejection.stage}: ${r.rejection.reason.slice(0, 100)})`);
  if (flags['dry-run'] || chosen.length === 0) return 0;

  const stack = await startStack({ config, log: (l) => console.log(l) });
  try {
    const { outcomes, summary } = await replayRejected({ config, client: stack.client, runId, outDir, filter });
    const nowAccepted = outcomes.filter((o) => o.accepted).length;
    console.log(`replayed ${outcomes.length}: ${nowAccepted} now accepted; run totals ${summary.accepted} accepted, ${summary.rejected} rejected`);
    return 0;
  } finally {
    await stack.close();
  }
}

main()
  .then((code) => process.exit(code))
  .catch((err: Error) => {
    console.error(err.message);
    process.exit(1);
  });
