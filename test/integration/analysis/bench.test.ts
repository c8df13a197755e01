/** The analysis benchmark runs end to end on a small generated repository and agrees with ast. */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');

jest.setTimeout(120_000);

it('prints parse and analysis rates, peak memory and a clean ast check', async () => {
  const { stdout } = await run(process.execPath, ['-r', 'tsx/cjs', 'scripts/bench/analysis.ts', '--files', '60', '--analyse', '20', '--ast-check'], { cwd: ROOT });
  expect(stdout).toMatch(/generated 60 files/);
  expect(stdout).toMatch(/read \+ parse: 61 files .* files\/s/);
  expect(stdout).toMatch(/extraction \+ filters: \d+ functions/);
  expect(stdout).toMatch(/dependency analysis \+ context: 20 functions .* functions\/s/);
  expect(stdout).toMatch(/peak RSS: \d+ MB/);
  expect(stdout).toMatch(/ast check: (\d+) functions by ast, \1 found; 0 missing, 0 extra/);
});
