import { BoundedOutput } from '../../../activities/sandbox/bounded-output';
import { chunk, harnessResultPath, helperCommand, launchCommand, mutationRunDeadlineSec, RESULT_TRAILER_MARKER, takeResultTrailer } from '../../../activities/sandbox/harness-command';

describe('harness commands', () => {
  test('launch fields are name, count, parts; values survive the split', () => {
    const script = 'x = "é😀"\n'.repeat(10_000);
    const { cmd, stdin } = launchCommand({ runDir: '/scratch/run-1', script, files: { 'a.txt': '' }, coverage: 'f', packageDir: null, timeoutSec: 30 });
    expect(stdin).toBeUndefined();
    expect(cmd.slice(0, 3)).toEqual(['python3', '-I', '/opt/repost/harness/launch.py']);
    const args = cmd.slice(3);
    const fields: Record<string, string> = {};
    for (let i = 0; i < args.length; ) {
      const n = Number(args[i + 1]);
      fields[args[i]!] = args.slice(i + 2, i + 2 + n).join('');
      i += 2 + n;
    }
    expect(fields).toEqual({ runDir: '/scratch/run-1', script, 'file:a.txt': '', coverage: 'f', timeoutSec: '30' });
    for (const a of args) expect(Buffer.byteLength(a)).toBeLessThan(128 * 1024);
  });

  test('large or NUL-holding requests go through stdin as JSON', () => {
    const big = launchCommand({ runDir: '/r', script: 'x'.repeat(2 * 1024 * 1024), files: {}, coverage: null, packageDir: '/p', timeoutSec: 5 });
    expect(big.cmd.at(-1)).toBe('-');
    expect(JSON.parse(big.stdin!.toString())).toMatchObject({ runDir: '/r', packageDir: '/p', coverage: null, timeoutSec: 5 });
    const nul = launchCommand({ runDir: '/r', script: 'print(1)', files: { d: 'a\0b' }, coverage: 'g', packageDir: null, timeoutSec: 5 });
    expect(JSON.parse(nul.stdin!.toString())).toMatchObject({ files: { d: 'a\0b' }, coverage: { functionName: 'g' } });
    // Harness helpers go through the supervisor too (its cleaning, its time limit).
    expect(helperCommand('ast_equiv.py', { a: 'x' }, 30).cmd).toEqual(['python3', '-I', '/opt/repost/harness/launch.py', 'helper', '1', 'ast_equiv.py', 'input', '1', '{"a":"x"}', 'timeoutSec', '1', '30']);
    const large = helperCommand('imports.py', { sources: { 'a.py': 'x'.repeat(2 * 1024 * 1024) } }, 30);
    expect(large.cmd.at(-1)).toBe('-');
    expect(JSON.parse(JSON.parse(large.stdin!.toString()).input).sources['a.py']).toHaveLength(2 * 1024 * 1024);
    // A test-runner request travels as one more field (JSON), in both encodings.
    const runner = { mode: 'matrix' as const, target: 'f', snippets: ['assert f(1)'], timeoutSec: 5 };
    const small = launchCommand({ runDir: '/r', script: 'x = 1', files: {}, coverage: null, packageDir: null, timeoutSec: 5, runner });
    expect(small.cmd.slice(small.cmd.indexOf('runner'), small.cmd.indexOf('runner') + 3)).toEqual(['runner', '1', JSON.stringify(runner)]);
    const viaStdin = launchCommand({ runDir: '/r', script: 'x'.repeat(2 * 1024 * 1024), files: {}, coverage: null, packageDir: null, timeoutSec: 5, runner });
    expect(JSON.parse(viaStdin.stdin!.toString()).runner).toEqual(runner);
    // The result lives in the supervisor's own folder, named after the run directory.
    expect(harnessResultPath('/scratch/run-abc')).toBe('/run/repost/run-abc.json');
  });

  test('mutation, hash seed and clock offset travel as fields, in both encodings; unset ones are left out', () => {
    const mutation = { target: 'A.m_new_implementation', cap: 30, seed: 0, mutantTimeoutSec: null, budgetSec: 600 };
    const fieldsOf = (cmd: string[]) => {
      const args = cmd.slice(3);
      const fields: Record<string, string> = {};
      for (let i = 0; i < args.length; ) {
        const n = Number(args[i + 1]);
        fields[args[i]!] = args.slice(i + 2, i + 2 + n).join('');
        i += 2 + n;
      }
      return fields;
    };
    // A mutation run's request never travels on the command line, which its jobs could read.
    const small = launchCommand({ runDir: '/r', script: 'x = 1', files: {}, coverage: null, packageDir: null, timeoutSec: 5, mutation, hashSeed: 3, clockOffsetSec: 90061.5 });
    expect(small.cmd.slice(-1)).toEqual(['-']);
    expect(small.cmd.join(' ')).not.toContain('x = 1');
    expect(JSON.parse(small.stdin!.toString())).toMatchObject({ script: 'x = 1', mutation, hashSeed: 3, clockOffsetSec: 90061.5 });
    const seedZero = launchCommand({ runDir: '/r', script: 'x = 1', files: {}, coverage: null, packageDir: null, timeoutSec: 5, hashSeed: 0, clockOffsetSec: 0 });
    expect(fieldsOf(seedZero.cmd)).toMatchObject({ hashSeed: '0', clockOffsetSec: '0' });
    const plain = fieldsOf(launchCommand({ runDir: '/r', script: 'x = 1', files: {}, coverage: null, packageDir: null, timeoutSec: 5 }).cmd);
    expect(Object.keys(plain)).toEqual(['runDir', 'script', 'timeoutSec']);
    const big = launchCommand({ runDir: '/r', script: 'x'.repeat(2 * 1024 * 1024), files: {}, coverage: null, packageDir: null, timeoutSec: 5, mutation, hashSeed: 7 });
    expect(JSON.parse(big.stdin!.toString())).toMatchObject({ mutation, hashSeed: 7, clockOffsetSec: null });
  });

  test("an isolated run's candidate travels as one JSON field on the command line (the supervisor blanks it before it forks), on stdin when too large", () => {
    const candidate = { target: 'f', kind: 'function' as const, module: 'def f(x):\n    return x\n' };
    const args = launchCommand({ runDir: '/r', script: 'x = 1', files: {}, coverage: null, packageDir: null, timeoutSec: 5, candidate }).cmd.slice(3);
    const at = args.indexOf('candidate');
    expect(at).toBeGreaterThan(0);
    expect(JSON.parse(args.slice(at + 2, at + 2 + Number(args[at + 1])).join(''))).toEqual(candidate);
    const big = launchCommand({ runDir: '/r', script: 'x'.repeat(2 * 1024 * 1024), files: {}, coverage: null, packageDir: null, timeoutSec: 5, candidate });
    expect(big.cmd.slice(-1)).toEqual(['-']);
    expect(JSON.parse(big.stdin!.toString())).toMatchObject({ candidate });
  });

  test("a mutation run's container outlives its budget and every step the supervisor may take before the mutants", () => {
    expect(mutationRunDeadlineSec(120, { budgetSec: 600 })).toBe(720);
    expect(mutationRunDeadlineSec(120, { budgetSec: 60 })).toBe(720);
    expect(mutationRunDeadlineSec(10, { budgetSec: 1000 })).toBe(1010);
  });

  test('chunks never split a surrogate pair', () => {
    const parts = chunk('a😀'.repeat(5), 2);
    expect(parts.join('')).toBe('a😀'.repeat(5));
    for (const p of parts) expect(p).toBe(Buffer.from(p).toString());
  });
});

describe('the result trailer on stdout', () => {
  const trailer = (json: string) => `\n${json}\n${RESULT_TRAILER_MARKER}${Buffer.byteLength(json)}\n`;
  const pushAll = (out: BoundedOutput, text: string, size = 7) => {
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  };

  test('is taken off the end by its length, leaving what the script printed', () => {
    const out = new BoundedOutput(4096);
    const result = JSON.stringify({ notes: ['é'], coverage: null });
    pushAll(out, `hello\nno newline at the end${trailer(result)}`);
    expect(takeResultTrailer(out)).toBe(result);
    expect(out.toString()).toBe('hello\nno newline at the end');
    expect(out.truncated).toBe(false);
  });

  test("a trailer the script printed earlier is part of its output: the supervisor's last one is read", () => {
    const out = new BoundedOutput(4096);
    const forged = JSON.stringify({ notes: [], coverage: { rate: 1 } });
    // A forged trailer claiming the supervisor's trailer (and its length) is part of its payload.
    const real = JSON.stringify({ notes: [`x${trailer(forged)}`], coverage: null });
    pushAll(out, `out${trailer(forged)}${trailer(real)}`);
    expect(JSON.parse(takeResultTrailer(out)!)).toEqual(JSON.parse(real));
    expect(out.toString()).toBe(`out${trailer(forged)}`);
  });

  test('no trailer, or one not kept whole: null, and stdout untouched', () => {
    const plain = new BoundedOutput(4096);
    pushAll(plain, 'just output\n');
    expect(takeResultTrailer(plain)).toBeNull();
    expect(plain.toString()).toBe('just output\n');
    // The length says more bytes than were kept (a result larger than the capture's tail).
    const cut = new BoundedOutput(64);
    const big = JSON.stringify({ notes: ['y'.repeat(200)] });
    pushAll(cut, `start\n${trailer(big)}`);
    expect(takeResultTrailer(cut)).toBeNull();
    expect(cut.truncated).toBe(true);
    // A length pointing before the stream's start.
    const short = new BoundedOutput(4096);
    pushAll(short, `{}\n${RESULT_TRAILER_MARKER}999\n`);
    expect(takeResultTrailer(short)).toBeNull();
  });

  test('output cut in the middle keeps the trailer in the tail, and the cut is counted without it', () => {
    const out = new BoundedOutput(200);
    const result = JSON.stringify({ notes: [] });
    pushAll(out, `${'a'.repeat(150)}\n${'b'.repeat(150)}\n${trailer(result)}`, 13);
    expect(takeResultTrailer(out)).toBe(result);
    expect(out.truncated).toBe(true);
    expect(out.totalBytes).toBe(302);
    expect(out.toString()).toMatch(/b\n$/);
  });

  test('output over the budget only with the trailer says it was cut when bytes were dropped meanwhile', () => {
    const out = new BoundedOutput(200);
    const result = JSON.stringify({ notes: ['n'.repeat(40)] });
    pushAll(out, `${'c'.repeat(140)}${trailer(result)}`);
    expect(takeResultTrailer(out)).toBe(result);
    expect(out.totalBytes).toBe(140);
    // Chunks of the c's left the tail while the trailer was being captured: never shown as whole.
    expect(out.truncated).toBe(true);
    expect(out.toString()).toMatch(/bytes of output cut \(140 in total\)/);
    expect(out.bytes()).toBeNull();
  });
});
