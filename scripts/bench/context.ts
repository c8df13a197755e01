/**
 * Context closure figure: on each repository, side by side in one run, the contexts of its
 * candidate functions built with only what the code needs to run (`contextClosure: false`, the
 * closure before it followed annotations, alias strings and dynamic lookups, without a depth
 * limit) and with the context closure (the default). For each: the names the context's code uses that the repository defines
 * and the context leaves out (`unsupplied` entries naming a local definition), the functions with
 * at least one, the dynamic lookups reported, what was left out for the budget or the depth, and
 * the context's size in characters; and of the dependencies the closure before kept (all of them
 * what runs needs), how many the context closure keeps too. Then the dedupe's own share: the
 * context closure once more with a repeated definition shown each time (`contextDedupe: false`),
 * and the characters the dedupe removes (in all, as a share of the undeduped contexts, and the
 * functions whose context it changes). Under a budget the undeduped contexts may also have cut
 * definitions the deduped ones keep; with `--budget 0` the difference is the repeats alone.
 *
 *   npm run bench -- context --dir <repo> [--dir <repo> ...] [--candidates 30] [--budget 8000] [--seed 0]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { RepositoryAnalyzer, type FunctionAnalysis } from '../../activities/analysis';
import { runCommand, UsageError } from '../lib/cli';

const Flags = z.object({
  dir: z.array(z.string().min(1)).min(1),
  candidates: z.coerce.number().int().positive().default(30),
  budget: z.coerce.number().int().nonnegative().default(8000),
  seed: z.coerce.number().int().default(0),
});

const OPTIONS = { dir: { type: 'string', multiple: true }, candidates: { type: 'string' }, budget: { type: 'string' }, seed: { type: 'string' } } as const;

interface Figures {
  functions: number;
  missing: number;
  /** Of the missing names, those the closure never reached (the others were cut for the budget or the depth). */
  unreached: number;
  withMissing: number;
  dynamic: number;
  leftOut: number;
  meanChars: number;
  maxChars: number;
}

function figures(analyses: FunctionAnalysis[]): Figures {
  const missingOf = (a: FunctionAnalysis) => a.unsupplied.filter((n) => n.includes('::')).length;
  const chars = analyses.map((a) => a.context.length);
  return {
    functions: analyses.length,
    missing: analyses.reduce((n, a) => n + missingOf(a), 0),
    unreached: analyses.reduce((n, a) => {
      const cut = new Set(a.truncated.map((t) => `${t.path}::${t.qualname}`));
      return n + a.unsupplied.filter((u) => u.includes('::') && !cut.has(u)).length;
    }, 0),
    withMissing: analyses.filter((a) => missingOf(a) > 0).length,
    dynamic: analyses.reduce((n, a) => n + a.dynamic.length, 0),
    leftOut: analyses.reduce((n, a) => n + a.truncated.length, 0),
    meanChars: chars.length ? Math.round(chars.reduce((x, y) => x + y, 0) / chars.length) : 0,
    maxChars: chars.length ? Math.max(...chars) : 0,
  };
}

async function main(values: unknown): Promise<void> {
  const flags = Flags.parse(values);
  const rows: string[][] = [['repository', 'functions', 'missing names (before -> after)', 'of which never reached', 'functions missing any', 'dynamic lookups', 'left out (budget/depth)', 'context chars mean', 'context chars max', 'runtime deps kept (before -> still after)', 'context chars without -> with dedupe (sum)', 'dedupe removes', 'functions it changes']];
  const dirs = flags.dir.map((d) => path.resolve(d));
  for (const dir of dirs) if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UsageError(`not a folder: ${dir}`);
  for (const dir of dirs) {
    const common = { contextTokenBudget: flags.budget, maxFunctionsPerRepo: flags.candidates, seed: flags.seed };
    // Before: the closure as it was, only what runs and no depth limit.
    const before = await RepositoryAnalyzer.open(dir, { ...common, contextClosure: false, closureDepth: 0 });
    const after = await RepositoryAnalyzer.open(dir, common);
    // The context closure with every repeated definition shown: what the dedupe removes on its own.
    const undeduped = await RepositoryAnalyzer.open(dir, { ...common, contextDedupe: false });
    const chosen = after.candidates();
    if (chosen.length === 0) throw new UsageError(`no candidate functions in ${dir}`);
    const pairs = chosen.map((f) => [before.analyze(f.path, f.qualname, f.occurrence), after.analyze(f.path, f.qualname, f.occurrence)] as const);
    const b = figures(pairs.map(([x]) => x));
    const a = figures(pairs.map(([, y]) => y));
    // What runs needs and the closure before kept: how much of it the context closure keeps too.
    let runtimeKept = 0;
    let runtimeStill = 0;
    for (const [x, y] of pairs) {
      const shown = (r: FunctionAnalysis) => {
        const cut = new Set(r.truncated.map((t) => `${t.path}::${t.qualname}`));
        return new Set(r.dependencies.map((d) => `${d.path}::${d.qualname}`).filter((k) => !cut.has(k)));
      };
      const later = shown(y);
      for (const k of shown(x)) {
        runtimeKept++;
        if (later.has(k)) runtimeStill++;
      }
    }
    let charsWithout = 0;
    let charsWith = 0;
    let changed = 0;
    for (const [f, [, y]] of chosen.map((c, i) => [c, pairs[i]!] as const)) {
      const z = undeduped.analyze(f.path, f.qualname, f.occurrence);
      charsWithout += z.context.length;
      charsWith += y.context.length;
      if (z.context !== y.context) changed++;
    }
    const share = charsWithout ? `${(((charsWithout - charsWith) / charsWithout) * 100).toFixed(1)}%` : '0%';
    const arrow = (x: number, y: number) => `${x} -> ${y}`;
    rows.push([path.basename(dir), String(a.functions), arrow(b.missing, a.missing), arrow(b.unreached, a.unreached), arrow(b.withMissing, a.withMissing), arrow(b.dynamic, a.dynamic), arrow(b.leftOut, a.leftOut), arrow(b.meanChars, a.meanChars), arrow(b.maxChars, a.maxChars), arrow(runtimeKept, runtimeStill), arrow(charsWithout, charsWith), `${charsWithout - charsWith} (${share})`, String(changed)]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
}

runCommand({ file: __filename, options: OPTIONS, run: ({ values }) => main(values) });
