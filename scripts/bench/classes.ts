/**
 * Class corpus benchmark: on one repository, side by side in one process, the function analysis
 * a crawl runs per repository (parse, extract and filter every function, dependencies and context
 * of the candidates it keeps) and the whole class corpus of it (parse, every class with every
 * metric, fan-in over the repository included, classes.jsonl, classes.parquet and the summary
 * written). Rounds alternate the two; medians of wall and CPU time and their ratio are printed.
 *
 *   npm run bench:classes -- --dir <repo> [--rounds 3] [--candidates 30] [--radon]
 *
 * --radon also compares every method's cyclomatic complexity with radon's (scripts/bootstrap.sh
 * --tests installs radon into .tools/radon).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { RepositoryAnalyzer } from '../../activities/analysis';
import { writeClassCorpus } from '../../activities/classes';
import { runCommand } from '../lib/cli';

const Flags = z.object({
  dir: z.string().min(1),
  rounds: z.coerce.number().int().positive().default(3),
  candidates: z.coerce.number().int().positive().default(30),
  radon: z.boolean().default(false),
});

const OPTIONS = { dir: { type: 'string' }, rounds: { type: 'string' }, candidates: { type: 'string' }, radon: { type: 'boolean' } } as const;

interface Timing {
  wall: number;
  cpu: number;
}

async function timed<T>(f: () => Promise<T>): Promise<{ value: T; t: Timing }> {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const value = await f();
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(c0);
  return { value, t: { wall, cpu: (c.user + c.system) / 1e6 } };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function main(values: unknown): Promise<void> {
  const flags = Flags.parse(values);
  const dir = path.resolve(flags.dir);
  const repoId = path.basename(dir);
  const options = { repoId, commit: 'bench', maxFunctionsPerRepo: flags.candidates };
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-classes-'));
  const functionRuns: Timing[] = [];
  const corpusRuns: Timing[] = [];
  const parseRuns: Timing[] = [];
  let facts = { files: 0, mb: 0, functions: 0, candidates: 0, classes: 0, methods: 0 };

  const functionAnalysis = async () => {
    const { value: analyzer, t: parse } = await timed(() => RepositoryAnalyzer.open(dir, options));
    parseRuns.push(parse);
    const functions = analyzer.functions();
    const candidates = analyzer.candidates();
    for (const f of candidates) analyzer.analyze(f.path, f.qualname, f.occurrence);
    facts = { ...facts, files: analyzer.repo.modules.size, mb: [...analyzer.repo.modules.values()].reduce((n, m) => n + m.text.length, 0) / 1e6, functions: functions.length, candidates: candidates.length };
  };
  const classCorpus = async () => {
    const result = await writeClassCorpus([{ ok: true, repo: { repoId, commit: 'bench', license: null, split: 'train', dir } }], { outDir: out });
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'classes-summary.json'), 'utf8')) as { methods: number };
    facts = { ...facts, classes: result.classes, methods: summary.methods };
  };
  try {
    for (let round = 0; round < flags.rounds; round++) {
      // Alternate which goes first, so neither always runs on a warmer (or busier) process.
      const order = round % 2 === 0 ? (['f', 'c'] as const) : (['c', 'f'] as const);
      for (const which of order) {
        if (which === 'f') functionRuns.push((await timed(functionAnalysis)).t);
        else corpusRuns.push((await timed(classCorpus)).t);
      }
    }
    const m = (runs: Timing[], k: keyof Timing) => median(runs.map((r) => r[k]));
    console.log(`${dir}: ${facts.files} Python files, ${facts.mb.toFixed(1)} MB; ${flags.rounds} round(s), medians`);
    console.log(`  function analysis (parse, ${facts.functions} functions extracted and filtered, contexts of ${facts.candidates} candidates): ${m(functionRuns, 'wall').toFixed(2)} s wall, ${m(functionRuns, 'cpu').toFixed(2)} s CPU`);
    console.log(`  class corpus (parse, ${facts.classes} classes and ${facts.methods} methods with every metric, files written): ${m(corpusRuns, 'wall').toFixed(2)} s wall, ${m(corpusRuns, 'cpu').toFixed(2)} s CPU`);
    console.log(`  of each, the parse: ${m(parseRuns, 'wall').toFixed(2)} s wall, ${m(parseRuns, 'cpu').toFixed(2)} s CPU`);
    console.log(`  ratio class corpus / function analysis: ${(m(corpusRuns, 'wall') / m(functionRuns, 'wall')).toFixed(2)} wall, ${(m(corpusRuns, 'cpu') / m(functionRuns, 'cpu')).toFixed(2)} CPU`);
    console.log(`  peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
    if (flags.radon) await radonCheck(dir);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

/** Every method's cyclomatic complexity against radon's (test/support/radon_methods.py, which only parses). */
async function radonCheck(dir: string): Promise<void> {
  const tools = path.resolve(__dirname, '../../.tools/radon');
  if (!fs.existsSync(path.join(tools, 'radon', '__init__.py'))) {
    console.log(`radon: not in ${tools} (run scripts/bootstrap.sh --tests)`);
    return;
  }
  const classes = (await RepositoryAnalyzer.open(dir)).classes();
  const r = spawnSync('python3', [path.resolve(__dirname, '../../test/support/radon_methods.py')], {
    input: JSON.stringify({ root: dir, paths: [...new Set(classes.map((c) => c.path))] }),
    env: { ...process.env, PYTHONPATH: tools, PYTHONDONTWRITEBYTECODE: '1' },
    maxBuffer: 1 << 30,
    timeout: 600_000,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`radon_methods.py failed: ${r.error?.message ?? r.stderr}`);
  const radon = JSON.parse(r.stdout) as { methods: Record<string, { class: string; method: string; line: number; complexity: number }[]>; errors: Record<string, string> };
  const theirs = new Map<string, number>();
  for (const [file, methods] of Object.entries(radon.methods)) for (const m of methods) theirs.set(`${file}::${m.class}.${m.method}@${m.line}`, m.complexity);
  let equal = 0;
  const differ: string[] = [];
  for (const c of classes) {
    for (const m of c.methods) {
      const key = `${c.path}::${c.qualname}.${m.name}@${m.line}`;
      if (theirs.get(key) === m.cyclomatic) equal++;
      else differ.push(`${key}: ${m.cyclomatic} here, ${theirs.get(key) ?? 'missing'} in radon`);
    }
  }
  console.log(`radon: ${equal + differ.length} methods of ${classes.length} classes, ${equal} equal, ${differ.length} different, ${Object.keys(radon.errors).length} files radon could not parse`);
  for (const d of differ.slice(0, 20)) console.log(`  ${d}`);
}

runCommand({ file: __filename, options: OPTIONS, run: ({ values }) => main(values) });
