/**
 * Benchmarks: `npm run bench -- <name> [args]` runs scripts/bench/<name>.ts with the arguments
 * that follow the name (also `npm run bench:<name>`). Each prints ratios measured side by side in
 * one run. Names: analysis, classes, context, crawl, isolated, llm, mutation, sandbox, serve.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCommand, UsageError } from './lib/cli';

/** A benchmark may run for hours (bench:crawl at 20,000 functions takes about 25 minutes). */
const BENCH_TIME_LIMIT_MS = 6 * 60 * 60 * 1000;

runCommand({
  file: __filename,
  positionals: { min: 1, max: 1 },
  passThrough: true,
  run({ positionals: [name], rest }) {
    const dir = path.join(__dirname, 'bench');
    const names = fs.readdirSync(dir).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3)).sort();
    if (!names.includes(name!)) throw new UsageError(`no benchmark ${name}: ${names.join(', ')}`);
    const r = spawnSync(process.execPath, [require.resolve('tsx/cli'), path.join(dir, `${name}.ts`), ...rest], { stdio: 'inherit', timeout: BENCH_TIME_LIMIT_MS });
    return r.status ?? 1;
  },
});
