/**
 * Reading an `eval-summary.json` back (`eval.ts --report` over run folders): a run folder may come
 * from anywhere, so the file is validated whole against the summary's shape before anything of it
 * reaches a page; a file that does not hold a summary is an error naming the file and the field.
 */
import * as fs from 'node:fs';
import { z } from 'zod';
import { FAILURE_KINDS } from './outcome';
import { RANKING_METHODS } from './ranking';
import { EvalSettingsSchema, SELECT_METHODS } from './settings';
import { UsageSchema } from '../store/usage';
import type { EvalSummary } from './summary';

const count = z.number().int().nonnegative();
const share = z.number().finite();
/** `pass@1` -> a share, or null where no function had k samples. */
const byK = z.record(z.string().max(32), share.nullable());
// A summary written before the harness kind existed has none: zero.
const kinds = z.object({
  ...(Object.fromEntries(FAILURE_KINDS.map((k) => [k, count])) as Record<(typeof FAILURE_KINDS)[number], typeof count>),
  harness: count.default(0),
});
const listed = z.array(z.object({ functionId: z.string(), error: z.string() }));
const RankingTotalsSchema = z.object({ functions: count, hitAtK: z.record(z.string().max(32), share), precisionAtK: byK });

export const EvalSummarySchema: z.ZodType<EvalSummary> = z.object({
  runId: z.string().min(1),
  task: EvalSettingsSchema.shape.task.unwrap(),
  model: z.string().min(1),
  settings: EvalSettingsSchema,
  dataset: z.object({
    file: z.string(),
    format: z.enum(['ours', 'repost', 'mixed']),
    functions: count,
    splits: z.object({ train: count, eval: count, none: count }),
  }),
  functions: count,
  evaluated: count,
  errors: listed,
  errorCount: count,
  stepErrors: listed,
  stepErrorCount: count,
  missing: count,
  samples: count,
  passAtK: byK,
  passAtKByRound: z.array(byK),
  byRepository: z.record(z.string(), z.object({ functions: count, passAtK: byK, finalPassAt1: share.nullable() })),
  withDocstring: z.object({ functions: count, passAtK: byK }),
  failureKinds: z.object({ initial: kinds, final: kinds }),
  harness: z
    .object({ samples: count, repairRounds: count, functions: count, examples: z.array(z.object({ functionId: z.string(), summary: z.string() })), samplesWithDroppedImports: count })
    .default({ samples: 0, repairRounds: 0, functions: 0, examples: [], samplesWithDroppedImports: 0 }),
  exceptionTypes: z.object({ initial: z.record(z.string(), count), final: z.record(z.string(), count) }),
  ranking: z
    .object({
      selected: z.enum(SELECT_METHODS),
      methods: z.partialRecord(z.enum(RANKING_METHODS), RankingTotalsSchema),
    })
    .nullable(),
  training: z
    .object({
      functionsWithPassing: z.object({ initial: count, afterRepair: count }),
      examples: count,
      groundTruthExamples: count,
      duplicates: count,
      unparsable: count,
    })
    .nullable(),
  augmentation: z.object({ functionsAugmented: count, inputsProposed: count, inputsKept: count }).nullable(),
  usage: z.object({ total: UsageSchema, byStep: z.record(z.string(), UsageSchema) }),
});

/** The summary in `file`; throws naming the file and what is wrong with it. */
export function readEvalSummaryFile(file: string): EvalSummary {
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: not JSON (${(err as Error).message})`);
  }
  const parsed = EvalSummarySchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`${file} is not an evaluation summary: ${issues.join('; ')}${parsed.error.issues.length > 5 ? '; ...' : ''}`);
  }
  return parsed.data;
}
