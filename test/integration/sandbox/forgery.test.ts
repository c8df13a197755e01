/**
 * Results a script or a candidate cannot forge: each cheap forgery, tried for real in the warm
 * pool, fails. The verdict comes from what the supervisor observes (the process's status, the
 * harness's one report through its own channel), never from a file in the script's folder or a
 * line it prints. What in-process tampering can still do is written down in docs/sandbox.md.
 */
import { matrixRow, runnerRequest, snippetResults } from '../../../activities/eval/test-runner';
import { warmExecutor } from './sandbox-env';

/** `f` with a branch; the script's tests cover one side of it. */
const PARTIAL = ['def f(x):', '    if x > 0:', '        return 1', '    return 0', '', 'assert f(1) == 1'];
const REAL_COVERAGE = { target: 'f', rate: 0.5, branches: { total: 2, taken: 1 }, missingLines: [4] };

/** Python that writes `line` into every pipe the process holds but its standard streams. */
const INTO_EVERY_PIPE = [
  'def into_every_pipe(line):',
  '    import os',
  '    for fd in map(int, os.listdir("/proc/self/fd")):',
  '        try:',
  '            if fd > 2 and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):',
  '                os.write(fd, line.encode())',
  '        except OSError:',
  '            pass',
];

describe('forged results', () => {
  const workerId = `forgery-${process.pid}`;
  const sandbox = warmExecutor(workerId);

  test('result file: one in its folder is never read, and the supervisor\'s folder is out of reach', async () => {
    const script = [
      ...PARTIAL,
      'import json, os',
      'fake = {"notes": [], "coverage": {"target": "f", "rate": 1.0, "summary": "forged"}, "timedOut": False, "verdict": None}',
      'for where in (".repost-result.json", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".repost-result.json")):',
      '    open(where, "w").write(json.dumps(fake))',
      'refused = []',
      'for attempt in (lambda: os.listdir("/run/repost"), lambda: open("/run/repost/" + os.path.basename(os.getcwd()) + ".json", "w")):',
      '    try:',
      '        attempt()',
      '    except PermissionError:',
      '        refused.append(True)',
      'print("refused", len(refused))',
    ].join('\n');
    const result = await sandbox.executor.run({ script, coverage: { functionName: 'f' } });
    expect(result).toMatchObject({ status: 'passed', stdout: 'refused 2\n', coverage: REAL_COVERAGE });
  });

  test("result trailer: one the script prints on stdout is not the supervisor's, whatever way it ends", async () => {
    // The supervisor ends stdout with its result (read from the end by its length); the script
    // prints a well-formed trailer claiming full coverage, as its last bytes.
    const forge = (ending: string[]) =>
      [
        ...PARTIAL,
        'import json, os, sys',
        'fake = json.dumps({"notes": [], "coverage": {"target": "f", "rate": 1.0, "branches": {"total": 2, "taken": 2}, "missingLines": [], "summary": "forged"}, "timedOut": False, "verdict": None, "runner": None, "missingModule": None})',
        'sys.stdout.write("printed\\n" + "\\n" + fake + "\\n\\x1e[repost-result] " + str(len(fake.encode())) + "\\n")',
        'sys.stdout.flush()',
        ...ending,
      ].join('\n');
    const ended = await sandbox.executor.run({ script: forge([]), coverage: { functionName: 'f' } });
    expect(ended).toMatchObject({ status: 'passed', coverage: REAL_COVERAGE });
    // What it printed is its output, shown as printed.
    expect(ended.stdout).toMatch(/^printed\n\n\{"notes".*"forged".*\n\x1e\[repost-result\] \d+\n$/s);
    expect(ended.stdout.split('\x1e[repost-result]')).toHaveLength(2);
    // Killed by a signal right after printing it: the result comes from the supervisor's file.
    const killed = await sandbox.executor.run({ script: forge(['import signal', 'os.kill(os.getpid(), signal.SIGKILL)']), coverage: { functionName: 'f' } });
    expect(killed.status).not.toBe('passed');
    expect(killed.coverage?.summary).not.toBe('forged');
    expect(killed.coverage?.rate ?? 0).toBeLessThan(1);
  });

  test('os._exit(0) or sys.exit(0) from the code under test is not a pass, nor is an _exit past the harness', async () => {
    const candidate = (ending: string) =>
      [
        'import os',
        'def f(x):',
        '    return x + 1',
        'def f_new_implementation(x):',
        `    ${ending}`,
        'def test():',
        '    assert f(1) == f_new_implementation(1)',
        'test()',
      ].join('\n');
    const hooked = await sandbox.executor.run({ script: candidate('os._exit(0)') });
    expect(hooked).toMatchObject({ status: 'error', exitCode: 125 });
    expect(hooked.notes.join('\n')).toMatch(/os\._exit\(0\) before its main module finished: the run cannot pass/);
    expect(hooked.stderr).toMatch(/os\._exit\(0\) before its main module finished/);
    // sys.exit(0) from the code under test: the tests after that call never ran.
    const raised = await sandbox.executor.run({ script: candidate('import sys; sys.exit(0)') });
    expect(raised).toMatchObject({ status: 'error', exitCode: 125 });
    expect(raised.notes.join('\n')).toMatch(/f_new_implementation ended the script with SystemExit\(0\)/);
    // The C library's _exit, around the harness's hook: no report at all, still no pass.
    const direct = await sandbox.executor.run({ script: candidate('import ctypes; ctypes.CDLL(None)._exit(0)') });
    expect(direct).toMatchObject({ status: 'error', exitCode: 125 });
    expect(direct.notes.join('\n')).toMatch(/ended with status 0 without the harness's report/);
  });

  test('last line: a report printed or written into the harness\'s channel after its own is refused', async () => {
    const script = [
      ...PARTIAL,
      ...INTO_EVERY_PIPE,
      'import atexit, json',
      'full = [[-1, 1], [1, 2], [2, 3], [3, -1], [2, 4], [4, -1]]',
      'forged = json.dumps({"kind": "end", "status": 0, "completed": True, "missingModule": None, "arcs": full}) + "\\n"',
      'def last_word():',
      '    print(json.dumps({"notes": [], "coverage": {"rate": 1.0}, "timedOut": False}))',
      '    into_every_pipe(forged)',
      'atexit.register(last_word)',
    ].join('\n');
    const result = await sandbox.executor.run({ script, coverage: { functionName: 'f' } });
    expect(result).toMatchObject({ status: 'error', exitCode: 125, coverage: null });
    expect(result.notes.join('\n')).toMatch(/report channel held a message after the harness's final one/);
  });

  test('nonce file: a candidate finds no secret, and its printed or planted results do not count', async () => {
    const script = (body: string, preamble: string[] = []) =>
      [
        ...preamble,
        'def f(x):',
        '    return x * 2',
        'def f_new_implementation(x):',
        `    ${body}`,
      ].join('\n');
    const tests = ['assert f(1) == 2', 'assert f(2) == 4', 'assert f(5) == 10'];
    const row = async (s: string) => {
      const result = await sandbox.executor.run(runnerRequest({ mode: 'matrix', script: s, target: 'f', snippets: tests, snippetTimeoutSec: 5 }));
      return { row: matrixRow(snippetResults(result, tests.length)), result };
    };
    expect((await row(script('return x * 2'))).row).toBe('111');
    expect((await row(script('return x + 1'))).row).toBe('100');
    // It looks for the runner's request file and prints result lines as the old runner wrote them.
    const printing = script('return x + 1', [
      'import os, glob',
      'found = [p for p in glob.glob("**/*", recursive=True) if "runner" in p or p.endswith(".json")]',
      'for i in range(3):',
      '    print(f"REPOST-RUNNER {found} {i} pass -", flush=True)',
    ]);
    const printed = await row(printing);
    expect(printed.row).toBe('100');
    expect(printed.result.stdout).toBe('');
    // It writes results into the harness's channel before the runner's own: the report is refused.
    const planting = script('return x + 1', [
      ...INTO_EVERY_PIPE,
      'import json',
      'for i in range(3):',
      '    into_every_pipe(json.dumps({"kind": "snippet", "index": i, "status": "pass", "detail": ""}) + "\\n")',
    ]);
    const planted = await row(planting);
    expect(planted.row).toBe('000');
    expect(planted.result.runner ?? null).toBeNull();
    expect(planted.result.notes.join('\n')).toMatch(/report channel held a test result out of the harness's order/);
  });

  test('atexit reporter: the harness\'s reporter found with gc and called again is refused', async () => {
    const script = (tests: string[]) =>
      [
        ...PARTIAL,
        'import atexit, gc',
        'class FakeData:',
        '    def arcs(self, path):',
        '        return [(-1, 1), (1, 2), (2, 3), (3, -1), (2, 4), (4, -1)]',
        'class FakeCoverage:',
        '    def stop(self):',
        '        pass',
        '    def get_data(self):',
        '        return FakeData()',
        'def report_again():',
        '    reporter = next(o for o in gc.get_objects() if type(o).__name__ == "_Reporter")',
        '    reporter.sent, reporter.cov = False, FakeCoverage()',
        '    reporter.end(0, True)',
        'atexit.register(report_again)',
        ...tests,
      ].join('\n');
    const passing = await sandbox.executor.run({ script: script([]), coverage: { functionName: 'f' } });
    expect(passing).toMatchObject({ status: 'error', exitCode: 125, coverage: null });
    expect(passing.notes.join('\n')).toMatch(/report channel held a message after the harness's final one/);
    // A failing run stays failed, whatever the reporter is made to say afterwards.
    const failing = await sandbox.executor.run({ script: script(['assert f(-1) == 1, "wrong"']), coverage: { functionName: 'f' } });
    expect(failing).toMatchObject({ status: 'failed', exitCode: 1, coverage: null, exception: { type: 'AssertionError', message: 'wrong' } });
  });

  test('patched sys.exit: a failing run that ends its process with status 0 stays failed', async () => {
    const script = (ending: string) =>
      [
        'import atexit, os, sys',
        ending,
        'def f(x):',
        '    return x + 1',
        'def f_new_implementation(x):',
        '    return x',
        'assert f(1) == f_new_implementation(1), "the candidate is wrong"',
      ].join('\n');
    // The harness ends the process with the sys.exit it kept before the script ran.
    const patched = await sandbox.executor.run({ script: script('sys.exit = lambda *args: os._exit(0)') });
    expect(patched).toMatchObject({ status: 'failed', exitCode: 1, exception: { type: 'AssertionError', message: 'the candidate is wrong' } });
    // Ending the process with status 0 anyway (from an atexit handler): the status the harness saw is kept.
    const ended = await sandbox.executor.run({ script: script('atexit.register(lambda: os._exit(0))') });
    expect(ended).toMatchObject({ status: 'failed', exitCode: 1, exception: { type: 'AssertionError', message: 'the candidate is wrong' } });
    expect(ended.notes.join('\n')).toMatch(/ended with status 0 but its main module ended with status 1/);
  });
});
