/**
 * The candidate in a process of its own, tried for real in the warm pool: the ground truth still
 * passes (callbacks, mocks, arguments changed in place, object state, generators, random state),
 * and every way a candidate could win without doing the work fails, each with a named reason.
 */
import { isolatedPlacement, type SandboxResult } from '../../../activities/sandbox';
import { outcomeOf } from '../../../activities/eval/outcome';
import { matrixRow, runnerRequest, snippetResults } from '../../../activities/eval/test-runner';
import { warmExecutor } from './sandbox-env';

const SORT_SCRIPT = [
  'def total(xs):',
  '    """The sum of the numbers in xs, sorted in place first."""',
  '    xs.sort()',
  '    if not xs:',
  '        return 0',
  '    return xs[0] + total(xs[1:])',
  '',
  'def test_total():',
  '    for case in ([3, 1, 2], [], [5], [2, 2, -1]):',
  '        a, b = list(case), list(case)',
  '        assert total(a) == total_new_implementation(b)',
  '        assert a == b',
  '        assert type(total(list(case))) is type(total_new_implementation(list(case)))',
  '',
  'if __name__ == "__main__":',
  '    test_total()',
].join('\n');

const RIGHT = 'def total(xs):\n    xs.sort()\n    return sum(xs)';

describe('isolated candidate runs', () => {
  const workerId = `isolated-${process.pid}`;
  const sandbox = warmExecutor(workerId);

  async function run(script: string, candidate: string, qualname: string, timeoutSec = 30): Promise<SandboxResult> {
    const placed = isolatedPlacement(script, candidate, qualname);
    return sandbox.executor.run({ script: placed.script, candidate: { target: placed.target, kind: placed.kind, module: placed.module }, timeoutSec });
  }

  test('the ground truth and a right answer pass; arguments changed in place come back', async () => {
    expect(outcomeOf(await run(SORT_SCRIPT, SORT_SCRIPT.split('\n\ndef test_total')[0]!, 'total'))).toMatchObject({ passed: true });
    expect(outcomeOf(await run(SORT_SCRIPT, RIGHT, 'total'))).toMatchObject({ passed: true });
    const noSort = 'def total(xs):\n    return sum(xs)';
    expect(outcomeOf(await run(SORT_SCRIPT, noSort, 'total'))).toMatchObject({ passed: false, kind: 'assertion' });
  });

  test('a candidate that delegates to the original reaches only itself', async () => {
    const delegates = 'def total(xs):\n    return total(xs)';
    expect(outcomeOf(await run(SORT_SCRIPT, delegates, 'total'))).toMatchObject({ passed: false, kind: 'exception', exceptionType: 'RecursionError' });
    const fromFrames = [
      'def total(xs):',
      '    import sys, gc',
      '    for depth in range(1, 30):',
      '        try:',
      '            g = sys._getframe(depth).f_globals',
      '        except ValueError:',
      '            break',
      '        f = g.get("total")',
      '        if callable(f) and getattr(f, "__module__", "") == "__main__" and getattr(f, "__code__", None) not in (None, total.__code__):',
      '            return f(xs)',
      '    for o in gc.get_objects():',
      '        try:',
      '            found = callable(o) and getattr(o, "__name__", "") == "total" and getattr(o, "__module__", "") == "__main__" and getattr(o, "__code__", None) is not total.__code__',
      '        except Exception:',
      '            continue',
      '        if found:',
      '            return o(xs)',
      '    raise LookupError("no original in reach")',
    ].join('\n');
    expect(outcomeOf(await run(SORT_SCRIPT, fromFrames, 'total'))).toMatchObject({ passed: false, kind: 'exception', exceptionType: 'LookupError' });
  });

  test('a recursive candidate with a wrong base case fails: its recursion reaches the candidate', async () => {
    const wrongBase = 'def total(xs):\n    xs.sort()\n    if len(xs) <= 1:\n        return 0\n    return xs[0] + total(xs[1:])';
    expect(outcomeOf(await run(SORT_SCRIPT, wrongBase, 'total'))).toMatchObject({ passed: false, kind: 'assertion' });
  });

  test('a result of another type than the ground truth\'s on the same call fails as wrong_type, even when the tests cannot tell', async () => {
    const looseScript = SORT_SCRIPT.split('\n').filter((l) => !l.includes('type(total')).join('\n');
    const asFloat = 'def total(xs):\n    xs.sort()\n    return float(sum(xs))';
    const result = await run(looseScript, asFloat, 'total');
    expect(outcomeOf(result)).toMatchObject({ passed: false, kind: 'wrong_type' });
    expect(result.candidate?.detail).toBe('on the same call the ground truth returns int and the candidate float');
    expect(outcomeOf(await run(looseScript, RIGHT, 'total'))).toMatchObject({ passed: true });
  });

  test('a value that equals everything is not decoded', async () => {
    const alwaysEqual = [
      'class Anything(list):',
      '    def __eq__(self, other):',
      '        return True',
      '    __hash__ = None',
      '',
      'def total(xs):',
      '    return Anything()',
    ].join('\n');
    const result = await run(SORT_SCRIPT, alwaysEqual, 'total');
    expect(outcomeOf(result)).toMatchObject({ passed: false, kind: 'forbidden_value' });
    expect(result.candidate?.detail).toMatch(/does not decode/);
  });

  test('a candidate cannot end the run, reach the report channel or forge a pass', async () => {
    const exits = 'def total(xs):\n    import os\n    os._exit(0)';
    expect(outcomeOf(await run(SORT_SCRIPT, exits, 'total'))).toMatchObject({ passed: false, kind: 'candidate_exit' });
    const sysExit = 'def total(xs):\n    import sys\n    sys.exit(0)';
    expect(outcomeOf(await run(SORT_SCRIPT, sysExit, 'total'))).toMatchObject({ passed: false, kind: 'candidate_exit' });
    const forges = [
      'def total(xs):',
      '    import os, json, ctypes',
      '    taken = getattr(os._exit, "__closure__", None)',
      '    end = json.dumps({"kind": "end", "status": 0, "completed": True, "missingModule": None, "exitedIn": None, "exception": None, "arcs": [[1, 2]]}) + "\\n"',
      '    for fd in range(3, 64):',
      '        try:',
      '            os.write(fd, end.encode())',
      '        except OSError:',
      '            pass',
      '    ctypes.CDLL(None)._exit(0)',
    ].join('\n');
    // Its only descriptor is its own end of the call socket: the forged line lands there and breaks the protocol.
    const result = await run(SORT_SCRIPT, forges, 'total');
    expect(outcomeOf(result)).toMatchObject({ passed: false, kind: 'protocol' });
    expect(result.candidate?.detail).toMatch(/channel broke/);
  });

  test('the candidate works in the script\'s working folder: files the tests write there are its to read, as in its repository', async () => {
    const script = [
      'import os',
      '',
      'def first_line(name):',
      '    with open(name) as fh:',
      '        return fh.readline().strip()',
      '',
      'def test_first_line():',
      '    with open("notes.txt", "w") as fh:',
      '        fh.write("alpha\\nbeta\\n")',
      '    assert first_line("notes.txt") == first_line_new_implementation("notes.txt") == "alpha"',
      '',
      'if __name__ == "__main__":',
      '    test_first_line()',
    ].join('\n');
    const right = 'def first_line(name):\n    import os\n    with open(os.path.join(os.getcwd(), name)) as fh:\n        return fh.readline().strip()';
    expect(outcomeOf(await run(script, right, 'first_line'))).toMatchObject({ passed: true });
  });

  test('the candidate cannot read the ground truth or touch the script\'s process', async () => {
    const snoops = [
      'def total(xs):',
      '    import os, signal',
      '    seen = []',
      '    for pid in os.listdir("/proc"):',
      '        if not pid.isdigit() or int(pid) == os.getpid():',
      '            continue',
      '        for what in ("cmdline", "environ", "mem"):',
      '            try:',
      '                with open(f"/proc/{pid}/{what}", "rb") as fh:',
      '                    if b"xs[0] + total" in fh.read(1 << 20):',
      '                        seen.append(what)',
      '            except OSError:',
      '                pass',
      '        try:',
      '            os.kill(int(pid), signal.SIGSTOP)',
      '            seen.append("signal")',
      '        except OSError:',
      '            pass',
      '    for root, _, files in [w for top in ("/scratch", "/tmp", "/home", "/run", "/var", "/etc", "/root") for w in os.walk(top)]:',
      '        for name in files:',
      '            try:',
      '                with open(os.path.join(root, name), "rb") as fh:',
      '                    if b"xs[0] + total" in fh.read(1 << 20):',
      '                        seen.append(os.path.join(root, name))',
      '            except OSError:',
      '                pass',
      '    if seen:',
      '        raise PermissionError("reached: " + ", ".join(seen))',
      '    xs.sort()',
      '    return sum(xs)',
    ].join('\n');
    const result = await run(SORT_SCRIPT, snoops, 'total');
    expect(result.stderr).not.toMatch(/reached:/);
    expect(outcomeOf(result)).toMatchObject({ passed: true });
  });

  test('callbacks, mocks, generators, random state and object state work across the boundary', async () => {
    const script = [
      'import random',
      'import subprocess',
      'from unittest.mock import patch, MagicMock',
      '',
      'class Walker:',
      '    def __init__(self):',
      '        self.seen = []',
      '',
      '    def walk(self, items, callback):',
      '        out = subprocess.run(["ls"], capture_output=True).stdout',
      '        name = input("name? ")',
      '        for i in items:',
      '            callback(i)',
      '            self.seen.append(i)',
      '        print("walked", len(items))',
      '        return (out, name, random.random(), [x for x in self.gen(items)])',
      '',
      '    def gen(self, items):',
      '        for i in items:',
      '            yield i * 2',
      '',
      'def test_walk():',
      '    fake = MagicMock()',
      '    fake.return_value.stdout = b"listing"',
      '    with patch("subprocess.run", fake), patch("builtins.input", return_value="ada"):',
      '        a, b = Walker(), Walker()',
      '        got_a, got_b = [], []',
      '        random.seed(7)',
      '        r1 = a.walk([1, 2], got_a.append)',
      '        random.seed(7)',
      '        r2 = b.walk_new_implementation([1, 2], lambda i: got_b.append(i))',
      '        assert r1 == r2, (r1, r2)',
      '        assert got_a == got_b == [1, 2]',
      '        assert a.seen == b.seen == [1, 2]',
      '        assert fake.call_count == 2',
      '',
      'if __name__ == "__main__":',
      '    test_walk()',
    ].join('\n');
    const method = [
      'def walk(self, items, callback):',
      '    out = subprocess.run(["ls"], capture_output=True).stdout',
      '    name = input("name? ")',
      '    for i in items:',
      '        callback(i)',
      '        self.seen.append(i)',
      '    print("walked", len(items))',
      '    return (out, name, random.random(), [x for x in self.gen(items)])',
    ].join('\n');
    const result = await run(script, method, 'Walker.walk');
    expect(result.stdout).toContain('walked 2');
    expect(outcomeOf(result)).toMatchObject({ passed: true });
  });

  test('ranking: candidate tests run against a candidate in its own process; one that ends its process or hangs fails only its own tests', async () => {
    const tests = ['assert total([3, 1]) == 4', 'assert total([]) == 0', 'assert total([5]) == 5', 'xs = [2, 1]\ntotal(xs)\nassert xs == [1, 2]'];
    const matrix = async (candidate: string) => {
      const placed = isolatedPlacement(SORT_SCRIPT, candidate, 'total');
      const request = runnerRequest({ mode: 'matrix', script: placed.script, target: 'total', snippets: tests, snippetTimeoutSec: 5, candidate: { target: placed.target, kind: placed.kind, module: placed.module } });
      return matrixRow(snippetResults(await sandbox.executor.run(request), tests.length));
    };
    expect(await matrix(RIGHT)).toBe('1111');
    expect(await matrix('def total(xs):\n    return sum(xs)')).toBe('1110');
    // A candidate that claims every test passed by ending its process fails them all.
    expect(await matrix('def total(xs):\n    import os\n    os._exit(0)')).toBe('0000');
  });

  test("the test runner reports each test's duration, on its own clock: a script replacing time.monotonic does not change it", async () => {
    const tests = ['import time\ntime.sleep(0.3)\nassert total([1]) == 1', 'assert total([]) == 0'];
    const script = `import time\ntime.monotonic = lambda: 0.0\n${SORT_SCRIPT}`;
    const placed = isolatedPlacement(script, RIGHT, 'total');
    const result = await sandbox.executor.run(runnerRequest({ mode: 'matrix', script: placed.script, target: 'total', snippets: tests, snippetTimeoutSec: 5, candidate: { target: placed.target, kind: placed.kind, module: placed.module } }));
    expect(matrixRow(snippetResults(result, tests.length))).toBe('11');
    const [slept, quick] = result.runner!.snippets.map((s) => s.durationSec!);
    // time.sleep waits at least as long as asked on the monotonic clock.
    expect(slept).toBeGreaterThanOrEqual(0.3);
    expect(quick).toBeGreaterThanOrEqual(0);
  });
});
