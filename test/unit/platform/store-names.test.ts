import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeFileDurable } from '../../../activities/store/artifacts';
import { safeName } from '../../../activities/store/local';
import { RunIdSchema, checkRunId, isRunId, runIdProblem } from '../../../activities/store/types';

describe('run ids', () => {
  it('accept the ids the factory makes, and refuse separators, control characters, dots and length', () => {
    for (const ok of ['demo-20261123-143947-ddca51', 'eval-x', 'it_long.path', 'repost-benchmark-eval-20261123-000000', 'r'.repeat(128)]) expect(isRunId(ok)).toBe(true);
    for (const bad of ['', '.', '..', '../etc', 'a/b', 'a\\b', 'a\nb', 'a\u0000b', 'a b', '.hidden', '-flag', 'a..b', 'é', 'r'.repeat(129)]) expect(isRunId(bad)).toBe(false);
    expect(runIdProblem('../x')).toBe(`not a run id: "../x" (1 to 128 letters, digits, '.', '_' or '-', starting with a letter or a digit, without '..')`);
    expect(runIdProblem('x'.repeat(5000))).toMatch(/^not a run id: "x{60}"\.\.\. \(5000 characters\)/);
    expect(() => checkRunId('a/b')).toThrow(/not a run id/);
    expect(RunIdSchema.safeParse('..').success).toBe(false);
    expect(RunIdSchema.parse('run-1')).toBe('run-1');
  });
});

describe('file names of function ids', () => {
  it('are the ids themselves for plain ids, and different for different ids', () => {
    expect(safeName('0123456789abcdef')).toBe('0123456789abcdef');
    const ids = ['a/b', 'a_b', 'a:b', 'a b', '..', '.', '.a', 'ü', 'u', 'a~b', `${'f'.repeat(3000)}1`, `${'f'.repeat(3000)}2`, 'f'.repeat(120), 'f'.repeat(121)];
    const names = ids.map(safeName);
    expect(new Set(names).size).toBe(ids.length);
    for (const n of names) {
      expect(n).toMatch(/^[A-Za-z0-9._~-]+$/);
      expect(n.length).toBeLessThanOrEqual(120);
      expect(['.', '..']).not.toContain(n);
    }
    expect(safeName('a_b')).toBe('a_b');
    expect(safeName('a/b')).toMatch(/^a_b~[0-9a-f]{32}$/);
  });
});

describe('durable writes', () => {
  it('leave the whole new content and no temporary file, and replace an earlier file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-durable-'));
    const file = path.join(dir, 'sub', 'a');
    await writeFileDurable(file, 'first');
    await writeFileDurable(file, Buffer.from('second, longer'));
    expect(fs.readFileSync(file, 'utf8')).toBe('second, longer');
    expect(fs.readdirSync(path.dirname(file))).toEqual(['a']);
  });
});
