/**
 * Static analysis of one repository folder.
 *
 *   npx tsx scripts/analyze.ts <repo-dir> [--function <path>::<qualname>] [--classes] [--deps]
 *                              [--source] [--max N] [--seed N] [--budget TOKENS] [--repo-id ID] [--commit SHA] [--json]
 *                              [--preset default|repost] [--split train|eval]
 *
 * Lists every module-level function and method (kept or dropped, with the rule that dropped it)
 * and the files that were skipped. --function fills in dependencies, standalone and context for
 * one function whatever the filters say; --deps does so for every kept function; --classes adds
 * class skeletons and metrics. --preset repost applies RepoST's published selection (its rules,
 * line limits, per-kind sampling and the split's context budget; --budget and --max, when given,
 * win over the preset's). Without --json a readable summary is printed.
 */
import * as fs from 'node:fs';
import { z } from 'zod';
import { ANALYSIS_PRESETS, chooseCandidates, REPOST_MAX_PER_REPO, REPOST_SELECTION, RepositoryAnalyzer, type FunctionAnalysis, type FunctionEntry } from '../activities/analysis';
import { CommandFailure, runCommand, UsageError } from './lib/cli';

const FlagsSchema = z.object({
  repoDir: z.string().min(1),
  function: z
    .string()
    .regex(/^.+\.py::[A-Za-z_][\w.]*$/, 'expected <path>::<qualname>, e.g. app/service.py::Service.handle')
    .optional(),
  classes: z.boolean().default(false),
  deps: z.boolean().default(false),
  source: z.boolean().default(false),
  json: z.boolean().default(false),
  max: z.coerce.number().int().positive().optional(),
  seed: z.coerce.number().int().default(0),
  budget: z.coerce.number().int().nonnegative().optional(),
  'repo-id': z.string().optional(),
  commit: z.string().optional(),
  preset: z.enum(ANALYSIS_PRESETS).default('default'),
  split: z.enum(['train', 'eval']).default('train'),
});
type Flags = z.infer<typeof FlagsSchema>;

const OPTIONS = {
  function: { type: 'string' },
  classes: { type: 'boolean' },
  deps: { type: 'boolean' },
  source: { type: 'boolean' },
  json: { type: 'boolean' },
  max: { type: 'string' },
  seed: { type: 'string' },
  budget: { type: 'string' },
  'repo-id': { type: 'string' },
  commit: { type: 'string' },
  preset: { type: 'string' },
  split: { type: 'string' },
} as const;

type Row = Omit<FunctionEntry, 'source'> & Partial<Pick<FunctionEntry, 'source'>> & Partial<Omit<FunctionAnalysis, keyof FunctionEntry>> & { selected: boolean };

async function main(flags: Flags): Promise<void> {
  if (!fs.existsSync(flags.repoDir) || !fs.statSync(flags.repoDir).isDirectory()) throw new UsageError(`not a folder: ${flags.repoDir}`);
  const started = Date.now();
  // As in a crawl: the preset's values lie under the flags (a --max or --budget given wins).
  const max = flags.max ?? (flags.preset === 'repost' ? REPOST_MAX_PER_REPO : 30);
  const budget = flags.budget ?? (flags.preset === 'repost' ? REPOST_SELECTION.contextTokens[flags.split] : 8000);
  const analyzer = await RepositoryAnalyzer.open(flags.repoDir, {
    maxFunctionsPerRepo: max,
    seed: flags.seed,
    contextTokenBudget: budget,
    repoId: flags['repo-id'],
    commit: flags.commit,
    preset: flags.preset,
    split: flags.split,
  });
  const functions = analyzer.functions();
  const selected = new Set(chooseCandidates(functions, { preset: flags.preset, split: flags.split, max, seed: flags.seed }).map((f) => f.id));
  let target: string | null = null;
  if (flags.function) {
    const [path, qualname] = flags.function.split('::') as [string, string];
    if (!functions.some((f) => f.path === path && f.qualname === qualname)) {
      const skip = analyzer.skipped.find((s) => s.path === path);
      throw new CommandFailure(skip ? `${path} was skipped: ${skip.reason}` : `no function ${qualname} in ${path}`);
    }
    target = `${path}::${qualname}`;
  }
  const rows: Row[] = functions.map((f) => {
    const { source, ...rest } = f;
    const row: Row = { ...rest, selected: selected.has(f.id), ...(flags.source ? { source } : {}) };
    if (target === `${f.path}::${f.qualname}` || (flags.deps && f.kept)) {
      const a = analyzer.analyze(f.path, f.qualname);
      Object.assign(row, {
        standalone: a.standalone,
        dependencies: a.dependencies,
        unresolved: a.unresolved,
        context: a.context,
        contextTokens: a.contextTokens,
        truncated: a.truncated,
      });
    }
    return row;
  });
  const classes = flags.classes ? analyzer.classes() : undefined;
  const droppedBy: Record<string, number> = {};
  for (const f of functions) if (f.droppedBy) droppedBy[f.droppedBy] = (droppedBy[f.droppedBy] ?? 0) + 1;
  const analysed = rows.filter((r) => r.standalone !== undefined);
  const stats = {
    files: analyzer.repo.modules.size,
    skippedFiles: analyzer.skipped.length,
    functions: functions.length,
    kept: functions.filter((f) => f.kept).length,
    selected: selected.size,
    droppedBy,
    analysed: analysed.length,
    standalone: analysed.filter((r) => r.standalone).length,
    elapsedMs: Date.now() - started,
  };
  if (flags.json) {
    const doc = { repo: { root: flags.repoDir, id: analyzer.repoId, commit: analyzer.options.commit }, stats, functions: rows, skipped: analyzer.skipped, ...(classes ? { classes } : {}) };
    process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    return;
  }
  const out: string[] = [];
  out.push(`${flags.repoDir}: ${stats.files} Python files parsed, ${stats.skippedFiles} skipped`);
  out.push(`${stats.functions} functions and methods, ${stats.kept} kept, ${stats.selected} selected (max ${max}, seed ${flags.seed})`);
  const dropped = Object.entries(droppedBy).sort((a, b) => b[1] - a[1]);
  if (dropped.length) out.push(`dropped by: ${dropped.map(([r, n]) => `${r} ${n}`).join(', ')}`);
  if (analysed.length > 1) out.push(`standalone: ${stats.standalone}/${analysed.length} (${((100 * stats.standalone) / analysed.length).toFixed(1)}%)`);
  for (const s of analyzer.skipped) out.push(`  skipped ${s.path}: ${s.reason}`);
  out.push('');
  for (const r of rows) {
    const mark = r.kept ? (r.selected ? '*' : '+') : '-';
    out.push(`${mark} ${r.path}:${r.startLine}-${r.endLine} ${r.qualname}${r.droppedBy ? `  [${r.droppedBy}]` : ''}`);
  }
  if (target) {
    const r = rows.find((x) => `${x.path}::${x.qualname}` === target)!;
    out.push('', `== ${target} (${r.standalone ? 'standalone' : `${r.dependencies!.length} local dependencies`}, ~${r.contextTokens} tokens)`);
    for (const d of r.dependencies!) out.push(`  ${'  '.repeat(Math.max(0, d.distance - 1))}${d.kind} ${d.path}::${d.qualname} (${d.startLine}-${d.endLine})`);
    if (r.unresolved!.length) out.push(`  unresolved: ${r.unresolved!.join(', ')}`);
    if (r.truncated!.length) out.push(`  left out for the token budget: ${r.truncated!.map((t) => `${t.path}::${t.qualname}`).join(', ')}`);
    out.push('', r.context!);
  }
  if (classes) {
    out.push('', `${classes.length} classes (test classes excluded)`);
    for (const c of classes) {
      const m = c.metrics;
      out.push(`  ${c.path}::${c.qualname} loc ${m.codeLines} methods ${m.methods} cc ${m.cyclomatic.total} ev ${m.essential.total} nest ${m.maxNesting} fan-in ${m.fanIn} fan-out ${m.fanOut.total} dit ${m.inheritanceDepth} noc ${m.children} cbo ${m.cbo} lcom4 ${m.lcom4} docs ${m.documentedUnits}/${m.programUnits}`);
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

runCommand({ file: __filename, options: OPTIONS, positionals: { min: 1, max: 1 }, run: ({ values, positionals }) => main(FlagsSchema.parse({ ...values, repoDir: positionals[0] })) });
