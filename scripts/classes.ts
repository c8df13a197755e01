/**
 * The class corpus (OpenClassGen's): every non-test class that parses, with its source, skeleton,
 * repository, path, commit and license, its documentation level and its metrics (size,
 * complexity, coupling, inheritance and cohesion; definitions in activities/analysis/README.md).
 *
 *   tsx scripts/classes.ts RUN                  the repositories of a crawl, from its snapshots
 *                                                (RUN: a run id in the store or a run's folder)
 *   tsx scripts/classes.ts DIR... | owner/name[@sha]...   sources as start.ts takes them
 *   tsx scripts/classes.ts --repos FILE          one source a line: a local path or owner/name[@sha]
 *   options: --out DIR          where to write (default: the run's folder for one run with a
 *                               folder, else <data dir>/classes/<run id or corpus-<time>>)
 *            --per-level N      also a stratified sample: N classes per documentation level
 *            --seed N           the sample's seed (default 0)
 *            --split train|eval the split of local sources (default train)
 *
 * Writes classes.jsonl, classes.parquet and classes-summary.json (and classes-sample.jsonl and
 * classes-sample.parquet with --per-level). A repository that cannot be read is listed in the
 * summary with its reason; the others are written.
 */
import * as path from 'node:path';
import { z } from 'zod';
import { classifyInput, resolveSource, runRepositories, writeClassCorpus, CorpusInputError, type CorpusInput, type CorpusSource } from '../activities/classes';
import { openRunReader } from '../activities/dataset/run-reader';
import { readSourceList } from '../activities/sources';
import { openStore } from '../activities/store';
import type { Store } from '../activities/store/types';
import { dataPaths, loadConfig, type Config } from '../temporal.config';
import { runCommand, UsageError } from './lib/cli';

const FlagsSchema = z.object({
  repos: z.array(z.string().min(1)).default([]),
  out: z.string().min(1).optional(),
  'per-level': z.coerce.number().int().nonnegative().default(0),
  seed: z.coerce.number().int().default(0),
  split: z.enum(['train', 'eval']).optional(),
});

async function* repositoriesOf(config: Config, store: Store, inputs: CorpusInput[], log: (l: string) => void): AsyncGenerator<CorpusSource> {
  for (const input of inputs) {
    if (input.kind === 'run') {
      yield* runRepositories(store, input.run);
      continue;
    }
    try {
      yield await resolveSource(config, input.source, log);
    } catch (err) {
      // A transient failure (GitHub down after its retries) skips the repository, not the corpus.
      const name = input.source.kind === 'local' ? input.source.path : input.source.fullName;
      yield { ok: false, source: name, reason: (err as Error).message };
    }
  }
}

function timestamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

const OPTIONS = {
  repos: { type: 'string', multiple: true },
  out: { type: 'string' },
  'per-level': { type: 'string' },
  seed: { type: 'string' },
  split: { type: 'string' },
} as const;

async function main(values: unknown, positionals: string[]): Promise<number> {
  const flags = FlagsSchema.parse(values);
  if (positionals.length === 0 && flags.repos.length === 0) throw new UsageError('give a run, folders, owner/name[@sha] or --repos FILE');
  const config = loadConfig();
  const store = await openStore(config);
  try {
    const inputs: CorpusInput[] = [];
    try {
      for (const arg of positionals) inputs.push(await classifyInput(store, arg, flags.split));
      for (const file of flags.repos) inputs.push(...readSourceList(file, flags.split).map((source): CorpusInput => ({ kind: 'source', source })));
    } catch (err) {
      if (err instanceof CorpusInputError || (err as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError((err as Error).message);
      throw err;
    }
    let outDir = flags.out;
    const runs = inputs.filter((i): i is Extract<CorpusInput, { kind: 'run' }> => i.kind === 'run');
    if (!outDir && inputs.length === 1 && runs.length === 1) {
      const reader = await openRunReader(store, runs[0]!.run);
      outDir = reader.outDir ?? path.join(dataPaths(config).root, 'classes', reader.runId);
    }
    outDir ??= path.join(dataPaths(config).root, 'classes', `corpus-${timestamp(new Date())}`);
    const log = (l: string) => console.log(l);
    const result = await writeClassCorpus(repositoriesOf(config, store, inputs, log), {
      outDir,
      analysis: { maxFileBytes: config.analysis.maxFileBytes },
      perLevel: flags['per-level'],
      seed: flags.seed,
      log,
    });
    console.log(`${result.classes} classes from ${result.repositories.length} repositor${result.repositories.length === 1 ? 'y' : 'ies'}${result.skipped.length ? `, ${result.skipped.length} skipped` : ''}`);
    if (result.sample) console.log(`sample: ${Object.entries(result.sample).map(([l, n]) => `${l} ${n}`).join(', ')} (seed ${flags.seed})`);
    console.log(`written to ${result.outDir}/: ${result.files.join(', ')}`);
    return result.repositories.length === 0 ? 1 : 0;
  } finally {
    await store.close();
  }
}

runCommand({ file: __filename, options: OPTIONS, positionals: { max: Infinity }, run: ({ values, positionals }) => main(values, positionals) });
