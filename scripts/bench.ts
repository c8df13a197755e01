/**
 * Benchmarks: `npm run bench -- <name> [args]` runs scripts/bench/<name>.ts
 * (also `npm run bench:<name>`). Each prints ratios measured side by side in one run.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const dir = path.join(__dirname, 'bench');
const names = fs.readdirSync(dir).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3)).sort();
const [name, ...rest] = process.argv.slice(2);
if (!name || !names.includes(name)) {
  console.error(`usage: npm run bench -- <${names.join('|')}> [args]`);
  process.exit(name ? 2 : 0);
}
const r = spawnSync(process.execPath, [require.resolve('tsx/cli'), path.join(dir, `${name}.ts`), ...rest], { stdio: 'inherit' });
process.exit(r.status ?? 1);
