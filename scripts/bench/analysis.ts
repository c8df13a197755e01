/**
 * Analysis benchmark: generates a large Python repository (default ~2,000 files, ~10 MB) in a
 * temporary folder, or takes an existing one with --dir, then reports files parsed per second,
 * functions extracted per second, dependency analyses per second and the peak memory.
 *
 *   npm run bench:analysis -- [--files 2000] [--analyse 2000] [--dir <repo>] [--keep] [--ast-check]
 *
 * --ast-check compares the (path, qualname, kind, span) set with a walk by Python's `ast`
 * (test/integration/analysis/ast_functions.py) and lists the differences.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { RepositoryAnalyzer, selectCandidates } from '../../activities/analysis';
import { runCommand } from '../lib/cli';
import { seededRandom } from '../lib/seeded-random';

const Flags = z.object({
  files: z.coerce.number().int().positive().default(2000),
  analyse: z.coerce.number().int().nonnegative().default(2000),
  dir: z.string().optional(),
  keep: z.boolean().default(false),
  /** Also compare the functions found with a walk by Python's own `ast` module. */
  'ast-check': z.boolean().default(false),
});

const OPTIONS = { files: { type: 'string' }, analyse: { type: 'string' }, dir: { type: 'string' }, keep: { type: 'boolean' }, 'ast-check': { type: 'boolean' } } as const;


/** A package-structured repository: modules import each other, classes inherit across modules. */
export function generateRepository(root: string, files: number): { bytes: number } {
  const rand = seededRandom(42);
  const pick = (n: number) => Math.floor(rand() * n);
  const perPackage = 50;
  const packages = Math.max(1, Math.ceil(files / perPackage));
  let bytes = 0;
  let written = 0;
  for (let p = 0; p < packages && written < files; p++) {
    const pkgDir = path.join(root, 'proj', `pkg${p}`);
    fs.mkdirSync(pkgDir, { recursive: true });
    const init = `"""Package ${p}."""\nfrom .mod0 import Model0_0, func0_0\n`;
    fs.writeFileSync(path.join(pkgDir, '__init__.py'), init);
    bytes += init.length;
    written++;
    for (let m = 0; m < perPackage - 1 && written < files; m++, written++) {
      const lines: string[] = [`"""Module ${m} of package ${p}: generated for the analysis benchmark."""`, 'import math', 'import os', 'from typing import List, Optional', ''];
      const otherP = pick(packages);
      const otherM = pick(perPackage - 1);
      if (m > 0) lines.push(`from .mod${m - 1} import func${m - 1}_1, Model${m - 1}_0, LIMIT_${m - 1}`);
      lines.push(`from proj.pkg${otherP} import mod${otherM} as other`, '');
      lines.push(`LIMIT_${m} = ${10 + pick(90)}`, `NAMES_${m} = ["a", "b", "c"]`, '');
      for (let c = 0; c < 2; c++) {
        const base = m > 0 && c === 0 ? `Model${m - 1}_0` : 'object';
        lines.push(`class Model${m}_${c}(${base}):`, `    """Model ${c} of module ${m}."""`, '', `    scale = ${1 + pick(9)}`, '');
        lines.push('    def __init__(self, value: float = 0.0, name: Optional[str] = None):', '        self.value = value', `        self.name = name or "model${c}"`, '');
        for (let k = 0; k < 4; k++) {
          lines.push(`    def method${k}(self, x, y=1):`, `        """Compute step ${k}."""`);
          lines.push(`        total = self.value * self.scale + x`, `        for i in range(int(y)):`, `            if i % 2 == 0 and total > LIMIT_${m}:`, `                total -= i`, '            else:', `                total += func${m}_${k % 3}(i)`);
          if (k > 0) lines.push(`        total += self.method${k - 1}(x)`);
          lines.push('        return total', '');
        }
      }
      for (let f = 0; f < 8; f++) {
        lines.push(`def func${m}_${f}(values, factor=2):`, `    """Helper ${f}: scales and sums values."""`, '    if not isinstance(values, (list, tuple)):', '        values = [values]');
        if (f > 0) lines.push(`    base = func${m}_${f - 1}(values, factor)`);
        else lines.push('    base = 0');
        if (m > 0 && f === 5) lines.push(`    base += func${m - 1}_1(values) + Model${m - 1}_0(1.0).method2(factor)`);
        if (f === 7) lines.push('    base += other.LIMIT_0 if hasattr(other, "LIMIT_0") else 0');
        lines.push(`    result = [math.sqrt(abs(v)) * factor + base for v in values if v is not None]`, `    return sum(result) / max(len(result), 1) + LIMIT_${m}`, '');
      }
      const text = `${lines.join('\n')}\n`;
      fs.writeFileSync(path.join(pkgDir, `mod${m}.py`), text);
      bytes += text.length;
    }
  }
  fs.writeFileSync(path.join(root, 'proj', '__init__.py'), '');
  return { bytes };
}

async function main(flags: z.infer<typeof Flags>): Promise<void> {
  let root = flags.dir;
  let generated = false;
  let tmpDir: string | null = null;
  if (!root) {
    // A fixed folder name: the repository id (and so the function ids and the sample analysed)
    // comes from it, which keeps runs comparable.
    tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-analysis-'));
    root = path.join(tmpDir, 'bench_repo');
    const t = Date.now();
    const { bytes } = generateRepository(root, flags.files);
    generated = true;
    console.log(`generated ${flags.files} files, ${(bytes / 1e6).toFixed(1)} MB in ${root} (${Date.now() - t} ms)`);
  }
  try {
    // CPU time is reported beside wall time: on a shared machine it is the steadier measure.
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const analyzer = await RepositoryAnalyzer.open(root, { maxFileBytes: 10 * 1024 * 1024 });
    const t1 = process.hrtime.bigint();
    const c1 = process.cpuUsage();
    const functions = analyzer.functions();
    const t2 = process.hrtime.bigint();
    const c2 = process.cpuUsage();
    const files = analyzer.repo.modules.size;
    const mb = [...analyzer.repo.modules.values()].reduce((n, m) => n + m.text.length, 0) / 1e6;
    const sec = (a: bigint, b: bigint) => Number(b - a) / 1e9;
    const cpu = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user - a.user + b.system - a.system) / 1e6;
    console.log(`read + parse: ${files} files (${mb.toFixed(1)} MB, ${analyzer.skipped.length} skipped) in ${sec(t0, t1).toFixed(2)} s = ${(files / sec(t0, t1)).toFixed(0)} files/s, ${(mb / sec(t0, t1)).toFixed(1)} MB/s (CPU ${cpu(c0, c1).toFixed(2)} s = ${(files / cpu(c0, c1)).toFixed(0)} files/s)`);
    console.log(`extraction + filters: ${functions.length} functions (${functions.filter((f) => f.kept).length} kept) in ${sec(t1, t2).toFixed(2)} s = ${(functions.length / sec(t1, t2)).toFixed(0)} functions/s (CPU ${cpu(c1, c2).toFixed(2)} s)`);
    const targets = selectCandidates(functions, flags.analyse, 0);
    const t3 = process.hrtime.bigint();
    const c3 = process.cpuUsage();
    let deps = 0;
    let standalone = 0;
    let tokens = 0;
    for (const f of targets) {
      const a = analyzer.analyze(f.path, f.qualname);
      deps += a.dependencies.length;
      tokens += a.contextTokens;
      if (a.standalone) standalone++;
    }
    const t4 = process.hrtime.bigint();
    const c4 = process.cpuUsage();
    if (targets.length) {
      console.log(
        `dependency analysis + context: ${targets.length} functions in ${sec(t3, t4).toFixed(2)} s = ${(targets.length / sec(t3, t4)).toFixed(0)} functions/s (CPU ${cpu(c3, c4).toFixed(2)} s) ` +
          `(mean ${(deps / targets.length).toFixed(1)} dependencies, ${(tokens / targets.length).toFixed(0)} context tokens, ${((100 * standalone) / targets.length).toFixed(1)}% standalone)`,
      );
    }
    console.log(`whole analysis (parse, extract, ${targets.length} contexts): ${sec(t0, t4).toFixed(2)} s wall, ${cpu(c0, c4).toFixed(2)} s CPU`);
    console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
    if (flags['ast-check']) {
      const walker = path.resolve(__dirname, '../../test/integration/analysis/ast_functions.py');
      const out = execFileSync('python3', [walker, root, ...analyzer.options.ignoreDirs], { encoding: 'utf8', maxBuffer: 1 << 30, timeout: 10 * 60_000, killSignal: 'SIGKILL' });
      const py = JSON.parse(out) as { functions: (string | number)[][]; skipped: string[] };
      const key = (r: (string | number)[]) => r.join('|');
      const mine = new Set(functions.map((f) => key([f.path, f.qualname, f.kind, f.startLine, f.endLine])));
      const theirs = new Set(py.functions.map(key));
      const missing = [...theirs].filter((k) => !mine.has(k));
      const extra = [...mine].filter((k) => !theirs.has(k));
      const mySkips = new Set(analyzer.skipped.map((s) => s.path));
      console.log(`ast check: ${theirs.size} functions by ast, ${mine.size} found; ${missing.length} missing, ${extra.length} extra`);
      for (const k of [...missing, ...extra].slice(0, 20)) console.log(`  ${mine.has(k) ? 'extra' : 'missing'} ${k}`);
      for (const p of py.skipped.filter((x) => !mySkips.has(x))) console.log(`  skipped by ast only: ${p}`);
      for (const s of analyzer.skipped.filter((x) => !py.skipped.includes(x.path))) console.log(`  skipped here only: ${s.path}: ${s.reason}`);
    }
  } finally {
    if (generated && !flags.keep && tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
  }
}

runCommand({ file: __filename, options: OPTIONS, run: ({ values }) => main(Flags.parse(values)) });
