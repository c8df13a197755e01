/**
 * Replay rejected functions of a run: each runs again as a FunctionWorkflow, its record is
 * replaced (never duplicated), and the run's summary and files are made again.
 *
 *   tsx scripts/replay.ts RUN [--stage STAGE ...] [--function ID ...] [--set key=value ...] [--out DIR] [--dry-run]
 *
 * RUN is a run id in the store or the run's folder, given as the argument (as every command takes
 * a run) or as `--run RUN`. The run must be in the store: a replay reads its snapshots and settings.
 *
 * A replay uses the run's own frozen settings (model, loops, thresholds, ...); `--set` changes
 * some of them for the replayed functions (e.g. `--set loops.debugRounds=5 --set llm.model=gpt-4o`),
 * and every replayed record names the settings it used. Answers already obtained are served from
 * the LLM cache, so a replay costs tokens only where the prompts change.
 */
import { z } from 'zod';
import { RunNotFoundError } from '../activities/dataset/run-reader';
import { REJECTION_STAGES } from '../activities/dataset/records';
import { unknownNameMessage } from '../activities/nearest-name';
import { openStore } from '../activities/store';
import { parseSettingOverrides } from '../activities/run-settings';
import { loadConfig } from '../temporal.config';
import { runCommand, UsageError } from './lib/cli';
import { namedRun } from './lib/run-argument';
import { rejectedToReplay, replayRejected } from './lib/replay';
import { startStack } from './lib/stack';

const OPTIONS = {
  run: { type: 'string' },
  stage: { type: 'string', multiple: true },
  function: { type: 'string', multiple: true },
  set: { type: 'string', multiple: true },
  out: { type: 'string' },
  'dry-run': { type: 'boolean' },
} as const;

const FlagsSchema = z.object({
  run: z.string().min(1),
  stage: z.array(z.string()).default([]),
  function: z.array(z.string()).default([]),
  set: z.array(z.string()).default([]),
  out: z.string().optional(),
  'dry-run': z.boolean().default(false),
});

async function main(values: Record<string, unknown>, positionals: string[]): Promise<number> {
  if (positionals.length > 0 && values.run !== undefined) throw new UsageError('give the run once: as the argument or as --run');
  if (positionals.length === 0 && values.run === undefined) throw new UsageError('give the run to replay: its id or its folder');
  const flags = FlagsSchema.parse({ ...values, run: values.run ?? positionals[0] });
  const config = loadConfig();
  let overrides: Record<string, unknown>;
  try {
    overrides = parseSettingOverrides(flags.set, (m) => console.warn(`warning: ${m}`));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  // A stage that no rejection can have would find nothing: refused, with the nearest stage.
  for (const stage of flags.stage) if (!(REJECTION_STAGES as readonly string[]).includes(stage)) throw new UsageError(unknownNameMessage('stage', stage, REJECTION_STAGES));
  const filter = { stages: flags.stage, functionIds: flags.function };

  const store = await openStore(config);
  let runId: string;
  try {
    const run = await namedRun(store, flags.run);
    if (!run.inStore) throw new RunNotFoundError(`the run ${run.runId} of the folder ${run.folder!.location} is not in the store at ${store.location}: a replay needs the run's store (its snapshots and settings)`);
    runId = run.runId;
    const chosen = await rejectedToReplay(store, runId, filter);
    console.log(`${chosen.length} rejected function(s) of run ${runId} to replay`);
    for (const r of chosen) console.log(`  ${r.fn.functionId} ${r.fn.path}::${r.fn.qualname} (${r.rejection.stage}: ${r.rejection.reason.slice(0, 100)})`);
    if (flags['dry-run'] || chosen.length === 0) return 0;
  } finally {
    await store.close();
  }

  const stack = await startStack({ config, log: (l) => console.log(l) });
  try {
    const { outcomes, summary, settingsKey } = await replayRejected({ config, client: stack.client, store: stack.store, runId, filter, overrides, outDir: flags.out });
    const nowAccepted = outcomes.filter((o) => o.accepted).length;
    console.log(`replayed ${outcomes.length} with settings ${settingsKey}: ${nowAccepted} now accepted; run totals ${summary.accepted} accepted, ${summary.rejected} rejected`);
    return 0;
  } finally {
    await stack.close();
  }
}

runCommand({ file: __filename, options: OPTIONS, positionals: { max: 1 }, run: ({ values, positionals }) => main(values, positionals) });
