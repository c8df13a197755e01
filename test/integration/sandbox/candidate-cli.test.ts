/**
 * `tsx scripts/sandbox.ts run SCRIPT --candidate ANSWER --target NAME` as a user checks an answer:
 * the answer runs in a process of its own, as an evaluation runs it; the exit status says whether
 * it passes, and a failure of the answer's own kind is named.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { requireEnv } from '../../support/factory';
import { SHARED_UV_CACHE } from './sandbox-env';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');

const SCRIPT = [
  'def halve(n):',
  '    return n // 2',
  '',
  'def test_halve():',
  '    for n in (0, 1, 7, 10):',
  '        assert halve(n) == halve_new_implementation(n)',
  '',
  'if __name__ == "__main__":',
  '    test_halve()',
].join('\n');

describe('sandbox.ts run --candidate', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-candidate-cli-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function check(answer: string): Promise<{ code: number; stdout: string }> {
    fs.writeFileSync(path.join(dir, 'eval_script.py'), SCRIPT);
    fs.writeFileSync(path.join(dir, 'answer.py'), answer);
    try {
      const { stdout } = await run(process.execPath, ['-r', 'tsx/cjs', 'scripts/sandbox.ts', 'run', path.join(dir, 'eval_script.py'), '--candidate', path.join(dir, 'answer.py'), '--target', 'halve'], {
        cwd: ROOT,
        timeout: 300_000,
        env: { ...process.env, REPOST_DATA_DIR: dir, REPOST_SANDBOX_IMAGE: requireEnv('REPOST_TEST_SANDBOX_IMAGE'), REPOST_SANDBOX_PACKAGES_UV_CACHE_DIR: SHARED_UV_CACHE },
      });
      return { code: 0, stdout };
    } catch (err) {
      const e = err as { code: number; stdout: string };
      return { code: e.code, stdout: e.stdout };
    }
  }

  test('a right answer passes, a wrong one fails, a float where the original returns an int fails as wrong_type', async () => {
    expect(await check('def halve(n):\n    return n >> 1\n')).toMatchObject({ code: 0 });
    expect(await check('def halve(n):\n    return n // 3\n')).toMatchObject({ code: 1, stdout: expect.stringContaining('AssertionError') });
    const float = await check('def halve(n):\n    return float(n // 2)\n');
    expect(float.code).toBe(1);
    expect(float.stdout).toMatch(/the answer failed the run \(wrong_type\): on the same call the ground truth returns int and the candidate float/);
  });
});
