/**
 * Rejection-sampling fine-tuning data from a training dataset, as RepoST builds it: n candidates
 * per function from a model (the one being trained, or a stronger one to distill), the ones that
 * pass the function's tests kept, failing ones optionally repaired with the error message and
 * kept if they then pass, duplicates dropped after Python's `ast` round trip, the ground truth
 * always included. Writes chat-format SFT JSONL (`sft.jsonl`: the context and signature as the
 * prompt, the passing definition as the answer) next to eval.jsonl and eval-summary.json.
 *
 * A dataset declared an evaluation set, or holding a repository already used for evaluation on
 * this data directory, is refused: the eval split never becomes training data.
 *
 *   tsx scripts/rft.ts --dataset FILE [options]
 *     --model M              the sampling model (default: llm.models.solve, else OPENAI_MODEL)
 *     --base-url URL         its OpenAI-compatible endpoint (default: OPENAI_BASE_URL)
 *     --n N                  candidates per function (default 8)
 *     --temperature T        sampling temperature (default 0.8)
 *     --repair-rounds R      repair rounds for failing candidates (default 1; 0 = none)
 *     --concurrency N  --sample-window N  --timeout S  --limit N  --out DIR  --run-id ID
 *     --no-workers  --scripted FIXTURE (offline scripted LLM)
 */
import { z } from 'zod';
import { RunIdSchema } from '../activities/store/types';
import { runCommand, UsageError } from './lib/cli';
import { runFromFlags, RUN_FLAG_OPTIONS } from './lib/eval-cli';

const intFlag = z.coerce.number().int().positive();

const FlagsSchema = z.object({
  dataset: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  'base-url': z.string().url().optional(),
  n: intFlag.default(8),
  temperature: z.coerce.number().min(0).max(2).default(0.8),
  'repair-rounds': z.coerce.number().int().nonnegative().default(1),
  concurrency: intFlag.optional(),
  'sample-window': intFlag.optional(),
  timeout: intFlag.optional(),
  limit: intFlag.optional(),
  out: z.string().min(1).optional(),
  'run-id': RunIdSchema.optional(),
  'no-workers': z.boolean().default(false),
  scripted: z.string().min(1).optional(),
});

async function main(values: unknown): Promise<number> {
  const flags = FlagsSchema.parse(values);
  if (!flags.dataset) throw new UsageError('give --dataset FILE');
  return runFromFlags(
    { dataset: flags.dataset, baseUrl: flags['base-url'], scripted: flags.scripted, limit: flags.limit, out: flags.out, runId: flags['run-id'], noWorkers: flags['no-workers'] },
    {
      task: 'rft',
      n: flags.n,
      temperature: flags.temperature,
      repairRounds: flags['repair-rounds'],
      // Pass@k of the sampling model is reported too; k values above n are left out.
      ks: [1, 5, 10],
      ...(flags.model ? { model: flags.model } : {}),
      ...(flags.concurrency ? { functionWindow: flags.concurrency } : {}),
      ...(flags['sample-window'] ? { sampleWindow: flags['sample-window'] } : {}),
      ...(flags.timeout ? { timeoutSec: flags.timeout } : {}),
    },
  );
}

runCommand({ file: __filename, options: RUN_FLAG_OPTIONS, run: ({ values }) => main(values) });
