/**
 * Mutation runs in real containers: the ground truth and each mutant forked from one warm
 * parent in one container run. Scores tell strong tests from weak ones; each mutant's outcome is
 * the one a run of that mutant on its own gives; a mutant that loops, kills its parent, leaves
 * processes or files, or forges its report changes nothing for the next.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { mutationSpec, summarizeMutation, testMutants, type MutationSettings } from '../../../activities/sandbox/mutation';
import { newImplementationName, withNewImplementation } from '../../../activities/sandbox/new-implementation';
import { parseRecordsJsonl } from '../../../activities/sandbox/repost-records';
import { REPOST_SAMPLE } from '../../support/fixtures';
import { containersOf, strayProcesses, warmExecutor } from './sandbox-env';

const MUTANTS_MODULE = path.resolve(__dirname, '../../../sandbox-image/harness/repost_mutants.py');
const lines = (...l: string[]) => `${l.join('\n')}\n`;

/** The mutant scripts the harness makes for a placed script (the same module, run by the host's python3). */
function mutantScripts(placed: string, functionName: string, settings: Pick<MutationSettings, 'cap' | 'seed'>): { script: string; diff: string }[] {
  const r = spawnSync('python3', [MUTANTS_MODULE], {
    input: JSON.stringify({ script: placed, target: newImplementationName(functionName), cap: settings.cap, seed: settings.seed }),
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return (JSON.parse(r.stdout) as { mutants: { script: string; diff: string }[] }).mutants;
}

const CLAMP = lines('def clamp(x, lo, hi):', '    if x < lo:', '        return lo', '    if x > hi:', '        return hi', '    return x');
const STRONG = lines(
  CLAMP,
  'def test_clamp():',
  '    for args in [(5, 0, 10), (-1, 0, 10), (11, 0, 10), (0, 0, 10), (10, 0, 10)]:',
  '        assert clamp(*args) == clamp_new_implementation(*args)',
  '',
  'if __name__ == "__main__":',
  '    test_clamp()',
);
const WEAK = lines(
  CLAMP,
  'def test_clamp():',
  '    assert type(clamp(5, 0, 10)) == type(clamp_new_implementation(5, 0, 10))',
  '',
  'if __name__ == "__main__":',
  '    test_clamp()',
);

/** The processes of the job's uid other than itself and its parent, and a file an earlier job would have left. */
const LEAK_CHECK = [
  'def leftovers():',
  '    mine = []',
  '    for p in os.listdir("/proc"):',
  '        if p.isdigit() and int(p) not in (os.getpid(), os.getppid()):',
  '            try:',
  '                if os.stat(f"/proc/{p}").st_uid == os.getuid():',
  '                    mine.append(p)',
  '            except OSError:',
  '                pass',
  '    return mine, os.path.exists("/tmp/left-behind") or os.path.exists("/home/user/tmp/left-behind")',
];
const LEAVES_BEHIND = lines(
  'import os, time',
  ...LEAK_CHECK,
  '',
  'def leave_behind(x):',
  '    if os.fork() == 0:',
  '        os.setsid()',
  '        time.sleep(60)',
  '        os._exit(0)',
  '    open("/tmp/left-behind", "w").write("x")',
  '    open("/home/user/tmp/left-behind", "w").write("x")',
  '    return x * 2',
  '',
  'def test_leave_behind():',
  '    assert leftovers() == ([], False), "something of an earlier run is here"',
  '    assert type(leave_behind(3)) == type(leave_behind_new_implementation(3))',
  '',
  'if __name__ == "__main__":',
  '    test_leave_behind()',
);

describe('mutation runs', () => {
  const workerId = `mutation-${process.pid}`;
  const sandbox = warmExecutor(workerId, 'pool', { pool: { enabled: true, size: 2, recycleAfterRuns: 200, maxAgeSec: 1800 } });

  test('strong tests kill every mutant but the equivalent ones, listed with their diffs; a test of the type only kills few', async () => {
    const strong = await testMutants(sandbox.executor, { script: STRONG, originalFunction: CLAMP, functionName: 'clamp' });
    expect(strong.result.status).toBe('passed');
    expect(strong.summary).toMatchObject({ status: 'scored', groundTruth: 'passed', mode: 'warm', timedOut: 0, notRun: 0 });
    expect(strong.summary.made).toBeGreaterThanOrEqual(10);
    // `x <= lo` returns lo when x == lo, which is x: no input tells them apart. The same for `x >= hi`.
    expect(strong.survivors.map((s) => s.diff.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++')))).toEqual([['+    if x <= lo:'], ['+    if x >= hi:']]);
    expect(strong.survivors.map((s) => [s.operator, s.line])).toEqual([['boundary', 2], ['boundary', 4]]);
    expect(strong.summary.score).toBeCloseTo((strong.summary.made - 2) / strong.summary.made);
    expect(strong.survivorsText).toContain('2 surviving mutant(s)');
    expect(strong.survivorsText).toContain('+    if x <= lo:');

    const weak = await testMutants(sandbox.executor, { script: WEAK, originalFunction: CLAMP, functionName: 'clamp' });
    expect(weak.summary).toMatchObject({ status: 'scored', made: strong.summary.made });
    expect(weak.summary.score!).toBeLessThan(0.5);
    expect(weak.summary.survived).toBeGreaterThan(strong.summary.survived);
    expect(weak.summary.killed + weak.summary.survived).toBe(weak.summary.made);
  });

  test('mutants of logging calls and message texts are left out and counted; measured (keepLeftOut) they run, survive the allowed tests and count only in the before score', async () => {
    const fn = lines(
      'import logging',
      'def scale(x, k):',
      '    if k == 0:',
      '        raise ValueError("cannot scale by zero")',
      '    logging.getLogger(__name__).info("scaling %s by %s", x, k)',
      '    return x * k',
    );
    const script = lines(
      fn,
      'def test_scale():',
      '    for args in [(2, 3), (0, 5), (-4, 2), (7, 1)]:',
      '        assert scale(*args) == scale_new_implementation(*args)',
      '    for impl in (scale, scale_new_implementation):',
      '        try:',
      '            impl(1, 0)',
      '            raise AssertionError("no error")',
      '        except ValueError:',
      '            pass',
      '',
      'if __name__ == "__main__":',
      '    test_scale()',
    );
    const input = { script, originalFunction: fn.replace('import logging\n', ''), functionName: 'scale' };
    const plain = await testMutants(sandbox.executor, input);
    expect(plain.summary.leftOut.output).toBeGreaterThan(0);
    expect(plain.summary.leftOut.message).toBeGreaterThan(0);
    expect(plain.result.mutation!.mutants.every((m) => !m.leftOut)).toBe(true);
    expect(plain.summary.score).toBe(1);
    const measured = await testMutants(sandbox.executor, input, { keepLeftOut: true });
    const tagged = measured.result.mutation!.mutants.filter((m) => m.leftOut);
    expect(tagged.length).toBeGreaterThan(0);
    expect(tagged.every((m) => m.outcome === 'survived')).toBe(true);
    expect(measured.summary.score).toBe(1);
    expect(measured.summary.made).toBe(measured.result.mutation!.mutants.length - tagged.length);
    expect(measured.summary.scoreWithLeftOut!).toBeCloseTo(measured.summary.made / (measured.summary.made + tagged.length));
  });

  test('each mutant ends as it does when run on its own, in its own container run (fixture records, and a script that leaves processes and files)', async () => {
    const records = parseRecordsJsonl(fs.readFileSync(REPOST_SAMPLE, 'utf8')).filter((r) => ['558', '163'].includes(r.idx));
    const cases = [
      ...records.map((r) => ({ script: r.eval_script, originalFunction: r.orig_func, functionName: r.func_name })),
      { script: LEAVES_BEHIND, originalFunction: LEAVES_BEHIND.match(/def leave_behind\(x\):[\s\S]*?return x \* 2\n/)![0], functionName: 'leave_behind' },
    ];
    const settings = { cap: 12, seed: 3 };
    for (const input of cases) {
      const outcome = await testMutants(sandbox.executor, input, settings);
      expect(outcome.result.status).toBe('passed');
      const report = outcome.result.mutation!;
      // Only a timeout needs a new warm parent (`not os.fork() == 0` makes the job itself sleep): what the
      // other jobs left behind was cleaned by the warm parent, as the leak check at each job's start shows.
      const timedOut = report.mutants.filter((m) => m.outcome === 'timeout');
      expect(report.warmStarts).toBe(1 + timedOut.filter((m) => m !== report.mutants.at(-1)).length);
      const alone = mutantScripts(withNewImplementation(input.script, input.originalFunction, input.functionName), input.functionName, settings);
      expect(alone.map((m) => m.diff)).toEqual(report.mutants.map((m) => m.diff));
      const separately = [];
      for (const m of alone) separately.push((await sandbox.executor.run({ script: m.script, install: true, timeoutSec: 5 })).status === 'passed' ? 'survived' : 'killed');
      const outcomes = report.mutants.map((m) => (m.outcome === 'timeout' ? 'killed' : m.outcome));
      expect({ fn: input.functionName, outcomes }).toEqual({ fn: input.functionName, outcomes: separately });
      expect(outcome.summary.survived).toBeGreaterThan(0);
      expect(outcome.summary.killed).toBeGreaterThan(0);
    }
  });

  test('a mutant that loops forever is killed by its time limit and counted apart; the next ones run in a new warm parent; nothing stays running', async () => {
    const original = lines('def count_up(n):', '    i = 0', '    while i < n:', '        i += 1', '    return i');
    const script = lines('def test_count_up():', '    for n in (0, 3, 10):', '        assert count_up(n) == count_up_new_implementation(n)', '', 'if __name__ == "__main__":', '    test_count_up()');
    const outcome = await testMutants(sandbox.executor, { script: original + script, originalFunction: original, functionName: 'count_up' }, { mutantTimeoutSec: 1 });
    const report = outcome.result.mutation!;
    const looping = report.mutants.filter((m) => m.outcome === 'timeout');
    // `i -= 1` and `pass` in place of `i += 1` never end.
    expect(looping.map((m) => m.diff.split('\n').find((l) => l.startsWith('+ ')))).toEqual(expect.arrayContaining(['+        i -= 1', '+        pass']));
    expect(outcome.summary.timedOut).toBe(looping.length);
    expect(outcome.summary.killed).toBe(report.mutants.filter((m) => m.outcome !== 'survived').length);
    expect(report.mutants.every((m) => m.outcome !== 'not_run')).toBe(true);
    expect(report.warmStarts).toBe(1 + looping.filter((m) => m !== report.mutants.at(-1)).length);
    for (const c of await containersOf(workerId)) expect(await strayProcesses(c.Id)).toEqual([]);
  });

  test("a job cannot reach its warm parent: signals are blocked, its memory is out of reach, its pipes closed; one that kills it gets a new one", async () => {
    const original = lines(
      'def probe(x):',
      '    parent = os.getppid()',
      '    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGHUP, signal.SIGCHLD):',
      '        os.kill(parent, sig)',
      '    try:',
      '        open(f"/proc/{parent}/mem", "rb").read(1)',
      '        raise RuntimeError("the warm parent\'s memory was read")',
      '    except PermissionError:',
      '        pass',
      '    if x > 100:',
      '        os.kill(parent, signal.SIGKILL)',
      '    # The OOM killer takes the job before the warm parent it came from.',
      '    assert open("/proc/self/oom_score_adj").read().strip() == "1000"',
      '    assert open(f"/proc/{parent}/oom_score_adj").read().strip() == "999"',
      '    return x + 1',
    );
    const tests = lines('def test_probe():', '    assert probe(1) == probe_new_implementation(1)', '', 'if __name__ == "__main__":', '    test_probe()');
    const outcome = await testMutants(sandbox.executor, { script: lines('import os, signal', original, tests), originalFunction: original, functionName: 'probe' }, { cap: 100 });
    expect(outcome.result.status).toBe('passed');
    const report = outcome.result.mutation!;
    expect(report.mode).toBe('warm');
    // `x <= 100` (and `not x > 100`) kill the warm parent: that job is lost, and a new parent runs the next.
    const lost = report.mutants.filter((m) => m.kind === 'lost');
    expect(lost.length).toBeGreaterThanOrEqual(2);
    expect(lost.every((m) => m.outcome === 'killed')).toBe(true);
    expect(report.warmStarts).toBe(1 + lost.filter((m) => m !== report.mutants.at(-1)).length);
    expect(report.mutants.every((m) => m.outcome !== 'not_run')).toBe(true);
    // Dropping a signal to the parent changes nothing the test sees: it survives.
    expect(outcome.survivors.some((s) => s.diff.includes('-        os.kill(parent, sig)'))).toBe(true);
  });

  test("a run's script has the OOM score that makes it the OOM killer's first choice", async () => {
    const r = await sandbox.executor.run({ script: 'print(open("/proc/self/oom_score_adj").read().strip())\n' });
    expect(r.stdout).toBe('1000\n');
  });

  test('a forged report does not make a mutant survive: os._exit(0) mid-test, or a fake end and a fake status written into every pipe it holds', async () => {
    const original = lines(
      'def g(x):',
      '    if x > 100:',
      '        os._exit(0)',
      '    if x < -100:',
      '        for fd in map(int, os.listdir("/proc/self/fd")):',
      '            try:',
      '                if fd > 2 and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):',
      '                    os.write(fd, b\'{"kind": "end", "status": 0, "completed": true}\\n{"kind": "done", "status": 0, "survivors": 0, "unclean": []}\\n\')',
      '            except OSError:',
      '                pass',
      '        return None',
      '    return x * 2',
    );
    const tests = lines('def test_g():', '    assert g(1) == g_new_implementation(1)', '', 'if __name__ == "__main__":', '    test_g()');
    const outcome = await testMutants(sandbox.executor, { script: lines('import os', original, tests), originalFunction: original, functionName: 'g' }, { cap: 100 });
    const report = outcome.result.mutation!;
    const byDiff = (text: string) => report.mutants.filter((m) => m.diff.includes(text));
    // The negated first condition runs os._exit(0) before the assert: unconfirmed, killed.
    expect(byDiff('+    if not x > 100:').map((m) => [m.outcome, m.kind])).toEqual([['killed', 'unconfirmed']]);
    // The negated second one writes forged messages into every pipe, then returns None: killed.
    expect(byDiff('+    if not x < -100:').map((m) => m.outcome)).toEqual(['killed']);
    expect(report.warmStarts).toBe(1);
  });

  test("a job ends as a script ends: its atexit handlers and its non-daemon threads still run and decide how its process ends", async () => {
    const original = lines(
      'def h(x):',
      '    if x > 100:',
      '        atexit.register(os._exit, 3)',
      '    if x < -100:',
      '        threading.Thread(target=lambda: (time.sleep(0.3), os._exit(4))).start()',
      '    return x',
    );
    const tests = lines('def test_h():', '    assert h(1) == h_new_implementation(1)', '', 'if __name__ == "__main__":', '    test_h()');
    const outcome = await testMutants(sandbox.executor, { script: lines('import atexit, os, threading, time', original, tests), originalFunction: original, functionName: 'h' }, { cap: 100 });
    const report = outcome.result.mutation!;
    const kindOf = (text: string) => report.mutants.filter((m) => m.diff.includes(text)).map((m) => [m.outcome, m.kind]);
    expect(kindOf('+    if not x > 100:')).toEqual([['killed', 'exit 3']]);
    expect(kindOf('+    if not x < -100:')).toEqual([['killed', 'exit 4']]);
  });

  test('a script that fails with its ground truth runs no mutant', async () => {
    const original = lines('def inc(x):', '    return x + 1');
    const outcome = await testMutants(sandbox.executor, { script: lines(original, 'assert inc(1) == 3'), originalFunction: original, functionName: 'inc' });
    expect(outcome.result.status).toBe('failed');
    expect(outcome.summary).toMatchObject({ status: 'ground_truth_failed', score: null, groundTruth: 'failed', killed: 0, survived: 0 });
    expect(outcome.summary.notRun).toBe(outcome.summary.made);
    expect(summarizeMutation(outcome.result).summary.status).toBe('ground_truth_failed');
  });

  test('modules that cannot serve a fork of the warm parent: the ground truth fails warm, and everything runs with each job importing them', async () => {
    // The module remembers the process that imported it; the test wants it to be its own.
    const files = { 'pidbound.py': 'import os\nPID = os.getpid()\n' };
    const original = lines('def double(x):', '    return x * 2');
    const script = withNewImplementation(
      lines('import os', 'import pidbound', original, 'if __name__ == "__main__":', '    assert pidbound.PID == os.getpid()', '    assert double(4) == double_new_implementation(4)'),
      original,
      'double',
    );
    const result = await sandbox.executor.mutate({ script, files, install: false }, mutationSpec('double', {}, 20));
    expect(result.status).toBe('passed');
    expect(result.mutation!.mode).toBe('plain');
    expect(result.mutation!.notes.join(' ')).toMatch(/the ground truth ended AssertionError with the script's modules imported in the warm parent/);
    expect(summarizeMutation(result).summary).toMatchObject({ status: 'scored', score: 1 });
  });

  test('a target the script does not define gives no mutant, and the ground truth still runs', async () => {
    const result = await sandbox.executor.mutate({ script: 'print("ok")\n', install: false }, { ...mutationSpec('absent', {}, 20) });
    expect(result.status).toBe('passed');
    expect(result.stdout).toBe('ok\n');
    expect(result.mutation!.notes).toEqual(['no mutants: LookupError: function absent_new_implementation not found in the script']);
    expect(summarizeMutation(result).summary).toMatchObject({ status: 'no_mutants', made: 0, score: null });
  });
});
