/** The executor's behaviour against the real engine: results, coverage, packages, cancellation, leftovers. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SandboxExecutor } from '../../../activities/sandbox';
import { LABELS, PROCESS_TOKEN, runContainerOptions } from '../../../activities/sandbox/container-spec';
import { SandboxCancelledError } from '../../../activities/sandbox/run-request';
import { leftoverAgeMs } from '../../../activities/sandbox/leftovers';
import { containersOf, docker, makeExecutor, testConfig } from './sandbox-env';

const BRANCHY = `def classify(x):
    if x > 0:
        return "pos"
    elif x < 0:
        return "neg"
    return "zero"


def straight(x):
    y = x + 1
    return y * 2


def test():
    assert classify(5) == "pos"
    assert classify(0) == "zero"
    assert straight(1) == 4


if __name__ == "__main__":
    test()
`;

describe('SandboxExecutor', () => {
  let executor: SandboxExecutor;
  const workerId = `executor-${process.pid}`;

  beforeAll(async () => {
    executor = await makeExecutor('pool', { workerId, pool: { enabled: true, size: 2, recycleAfterRuns: 3, maxAgeSec: 1800 } });
  });

  afterAll(async () => {
    await executor.close();
    expect(await containersOf(workerId)).toHaveLength(0);
  });

  test('statuses: passed, failed assertion, error, syntax error, sys.exit', async () => {
    const passed = await executor.run({ script: 'print("hello")' });
    expect(passed).toMatchObject({ status: 'passed', exitCode: 0, stdout: 'hello\n', stderr: '', exception: null, truncated: false });
    const failed = await executor.run({ script: 'def f():\n    return 1\nassert f() == 2, "f is wrong"\n' });
    expect(failed).toMatchObject({ status: 'failed', exitCode: 1, exception: { type: 'AssertionError', message: 'f is wrong' } });
    expect(failed.exception!.traceback).toContain('line 3');
    const error = await executor.run({ script: 'import json\njson.loads("{")\n' });
    expect(error.status).toBe('error');
    expect(error.exception?.type).toBe('json.decoder.JSONDecodeError');
    const syntax = await executor.run({ script: 'def f(:\n    pass\n' });
    expect(syntax).toMatchObject({ status: 'error', exception: { type: 'SyntaxError' } });
    const exit = await executor.run({ script: 'import sys\nsys.exit(3)\n' });
    expect(exit).toMatchObject({ status: 'error', exitCode: 3 });
    // A script that prints "error" but exits 0 passes: no stderr heuristics.
    const noisy = await executor.run({ script: 'import sys\nprint("error: not really", file=sys.stderr)\n' });
    expect(noisy.status).toBe('passed');
  });

  test('files land next to the script; CACHE_DIR and /home/user/tmp are writable; stdin is empty', async () => {
    const result = await executor.run({
      script: [
        'import os, sys',
        'from helper import VALUE',
        'print(VALUE, open("data/input.txt").read())',
        'open(os.path.join(os.environ["CACHE_DIR"], "c.txt"), "w").write("x")',
        'open("/home/user/tmp/r.txt", "w").write("x")',
        'print(sys.stdin.read() == "", os.getcwd() == os.path.dirname(os.path.abspath(__file__)))',
      ].join('\n'),
      files: { 'helper.py': 'VALUE = 42\n', 'data/input.txt': 'payload' },
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('42 payload\nTrue True\n');
  });

  test('a file name escaping the run directory is refused', async () => {
    const result = await executor.run({ script: 'print(1)', files: { '../../etc/x': 'no' } });
    expect(result.status).toBe('error');
    expect(result.stderr).toMatch(/escapes the run directory/);
  });

  test('branch coverage of a span: arcs taken, missing lines and branches', async () => {
    const result = await executor.run({ script: BRANCHY, coverage: { functionName: 'classify' } });
    expect(result.status).toBe('passed');
    const c = result.coverage!;
    expect(c).toMatchObject({ target: 'classify', startLine: 1, endLine: 6, hasBranches: true });
    // Branch points: line 2 (-> 3, -> 4) and line 4 (-> 5, -> 6); 4->5 never ran.
    expect(c.branches).toEqual({ total: 4, taken: 3, rate: 0.75 });
    expect(c.rate).toBe(0.75);
    expect(c.missingLines).toEqual([5]);
    expect(c.missingBranches).toEqual([{ from: 4, to: 5, text: '4->5' }]);
    expect(c.summary).toContain('4->5');
  });

  test('a function without branches says so', async () => {
    const result = await executor.run({ script: BRANCHY, coverage: { functionName: 'straight' } });
    const c = result.coverage!;
    expect(c.hasBranches).toBe(false);
    expect(c.branches).toEqual({ total: 0, taken: 0, rate: null });
    expect(c.lines).toEqual({ total: 3, covered: 3, rate: 1 });
    expect(c.summary).toMatch(/no branches/);
  });

  test('a missing coverage target is a note, not a crash', async () => {
    const result = await executor.run({ script: BRANCHY, coverage: { functionName: 'nope' } });
    expect(result.status).toBe('passed');
    expect(result.coverage).toBeNull();
    expect(result.notes.join('\n')).toMatch(/'nope' is not defined/);
  });

  test('a script that removes its own run directory keeps its status and its coverage', async () => {
    // The harness kept the source and the arcs outside the script's process.
    const result = await executor.run({
      script: 'import os, shutil\ndef f():\n    return 1\nf()\nshutil.rmtree(os.path.dirname(os.path.abspath(__file__)))\n',
      coverage: { functionName: 'f' },
    });
    expect(result.status).toBe('passed');
    expect(result.coverage).toMatchObject({ target: 'f', rate: 1, lines: { total: 2, covered: 2 } });
  });

  test('AST equivalence ignores docstrings and comments, not decorators or defaults', async () => {
    expect(await executor.astEquivalent('def f(a, b=1):\n    """Doc."""\n    return a + b  # sum\n', 'def f(a, b=1):\n    return (a + b)\n')).toEqual({
      equivalent: true,
      difference: null,
    });
    const deco = await executor.astEquivalent('@cache\ndef f(a):\n    return a\n', 'def f(a):\n    return a\n');
    expect(deco.equivalent).toBe(false);
    expect(deco.difference).toMatch(/decorator_list/);
    const body = await executor.astEquivalent('def f(a):\n    return a + 1\n', 'def f(a):\n    return a - 1\n');
    expect(body.difference).toMatch(/function\.body\[0\]\.value\.op/);
    const broken = await executor.astEquivalent('def f(:', 'def f(): pass');
    expect(broken.difference).toMatch(/does not parse/);
  });

  test('the packages a script imports are installed before its first run and kept for the next', async () => {
    const script = 'import yaml\nassert yaml.safe_load("a: 1") == {"a": 1}\nprint(yaml.__version__)\n';
    const without = await executor.run({ script });
    expect(without).toMatchObject({ status: 'error', exception: { type: 'ModuleNotFoundError' }, packages: [] });
    const result = await executor.run({ script, install: true });
    expect(result.status).toBe('passed');
    expect(result.requirements).toEqual(['pyyaml']);
    expect(result.packages).toEqual([{ name: 'PyYAML', version: result.stdout.trim() }]);
    // Found by reading the source: no run failed on the import first.
    expect(result.notes).toEqual([]);
    // The set is cached: the next script needing it finds it without network.
    const cached = executor.packages.lookup(['PyYAML']);
    expect(cached?.packages).toEqual(result.packages);
    const again = await executor.run({ script, requirements: ['PyYAML'] });
    expect(again.status).toBe('passed');
    expect(again.notes).toEqual([]);
  });

  test('an uninstallable module is named with the reason, and the run goes on without it', async () => {
    const result = await executor.run({ script: 'import repost_no_such_module_xyz\n', install: true });
    expect(result.status).toBe('error');
    expect(result.notes.join('\n')).toMatch(/package repost_no_such_module_xyz not installed: repost-no-such-module-xyz is not on the package index/);
  });

  test("a module of the script's own repository is never installed from PyPI", async () => {
    // `yaml` would install (see above); named as the repository's own module it must not.
    const result = await executor.run({ script: 'from yaml.helpers import tidy\n', install: true, localModules: ['yaml', 'textkit'] });
    expect(result.status).toBe('error');
    expect(result.exception?.type).toBe('ModuleNotFoundError');
    expect(result.requirements).toEqual([]);
    expect(result.notes.join('\n')).toMatch(/module yaml belongs to the repository/);
  });

  test('unusable suggested requirements are dropped and the run installs what it needs', async () => {
    const result = await executor.run({
      script: 'import yaml\nprint("ok")\n',
      install: true,
      requirements: ['repost-no-such-distribution-xyz', 'rm -rf /'],
    });
    expect(result.status).toBe('passed');
    expect(result.requirements).toEqual(['pyyaml']);
    expect(result.notes.join('\n')).toMatch(/"rm -rf \/" ignored/);
    expect(result.notes.join('\n')).toMatch(/repost-no-such-distribution-xyz not installed: .*not on the package index/);
  });

  test('cancellation removes the container and rejects', async () => {
    const controller = new AbortController();
    const beats: number[] = [];
    const running = executor.run({ script: 'import time\ntime.sleep(60)\n' }, { signal: controller.signal, heartbeat: () => beats.push(Date.now()) });
    setTimeout(() => controller.abort(), 6000);
    await expect(running).rejects.toBeInstanceOf(SandboxCancelledError);
    expect(beats.length).toBeGreaterThanOrEqual(1);
    const after = await executor.run({ script: 'print("ok")' });
    expect(after.status).toBe('passed');
  });

  test('the pool recycles containers after their run budget', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 7; i++) {
      const r = await executor.run({ script: 'import socket\nprint(socket.gethostname())' });
      ids.add(r.stdout.trim());
    }
    // 7 runs on containers allowed 3 runs each need at least 3 containers.
    expect(ids.size).toBeGreaterThanOrEqual(3);
    expect((await containersOf(workerId)).length).toBeLessThanOrEqual(2);
  });

  test('process pools, spawn and subprocesses work, and see the installed packages', async () => {
    const script = [
      'import multiprocessing as mp, subprocess, sys',
      'from concurrent.futures import ProcessPoolExecutor',
      'def sq(x):',
      '    return x * x',
      'if __name__ == "__main__":',
      '    with ProcessPoolExecutor(2) as ex:',
      '        assert list(ex.map(sq, range(5))) == [0, 1, 4, 9, 16]',
      '    with mp.get_context("spawn").Pool(2) as p:',
      '        assert p.map(sq, [1, 2, 3]) == [1, 4, 9]',
      '    out = subprocess.run([sys.executable, "-c", "import yaml; print(yaml.__version__)"], capture_output=True, text=True)',
      '    print(out.stdout.strip() or out.stderr)',
    ].join('\n');
    const result = await executor.run({ script, requirements: ['PyYAML'] });
    expect(result.stderr).toBe('');
    expect(result.status).toBe('passed');
    expect(result.stdout.trim()).toBe(result.packages.find((p) => p.name === 'PyYAML')!.version);
  });

  test("a run's own limits apply to a warm container, then the next run's", async () => {
    // A run frozen with 96 MB cannot hold 200 MB; the same script under the executor's 2 GB can.
    const grab = 'x = bytearray(200 * 1024 * 1024)\nprint(len(x))\n';
    const tight = await executor.run({ script: grab, limits: { memoryMb: 96, cpus: 1, pidsLimit: 64 } });
    expect(tight.status).toBe('oom');
    expect(tight.notes.join('\n')).toContain('96 MB');
    const roomy = await executor.run({ script: grab });
    expect(roomy.status).toBe('passed');
    expect(roomy.stdout.trim()).toBe(String(200 * 1024 * 1024));
  });

  test('runs in parallel share nothing', async () => {
    const script = 'import os, time\np = os.path.join(os.environ["CACHE_DIR"], "mine")\nassert not os.path.exists(p)\nopen(p, "w").write("1")\ntime.sleep(0.5)\nprint(sorted(os.listdir("/scratch")).__len__())\n';
    const results = await Promise.all(Array.from({ length: 4 }, () => executor.run({ script })));
    for (const r of results) expect(r.status).toBe('passed');
  });
});

describe('leftovers of a crashed worker', () => {
  test('are found by label and by age, whatever their worker, and removed', async () => {
    const workerId = `leftover-${process.pid}`;
    const packagesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-leftover-'));
    const executor = await makeExecutor('cold', { workerId });
    // A container as a previous incarnation of this worker would have left it.
    const options = runContainerOptions({ image: executor.image, limits: testConfig(), envsDir: packagesDir, workerId, role: 'pool' });
    options.Labels = { ...options.Labels, [LABELS.process]: `${os.hostname()}:999999:1` };
    const stale = await docker.createContainer(options);
    await stale.start();
    // One of this very process must survive.
    const mine = await docker.createContainer(runContainerOptions({ image: executor.image, limits: testConfig(), envsDir: packagesDir, workerId, role: 'pool' }));
    expect((await mine.inspect()).Config.Labels[LABELS.process]).toBe(PROCESS_TOKEN);
    // Another worker's, on another host: alive as far as anyone here can tell, until it is too old.
    const foreignWorker = `leftover-foreign-${process.pid}`;
    const foreignOptions = runContainerOptions({ image: executor.image, limits: testConfig(), envsDir: packagesDir, workerId: foreignWorker, role: 'pool' });
    foreignOptions.Labels = { ...foreignOptions.Labels, [LABELS.process]: 'another-host:1:1' };
    const foreign = await docker.createContainer(foreignOptions);
    try {
      expect(await executor.cleanupLeftovers()).toBe(1);
      const left = await containersOf(workerId);
      expect(left.map((c) => c.Id)).toEqual([mine.id]);
      expect((await containersOf(foreignWorker)).map((c) => c.Id)).toEqual([foreign.id]);
      // Past the age no live container reaches, a sweep removes it whatever its worker; this
      // process's stay. (The sweep is narrowed to this test's workers: others share the engine.)
      const later = Date.now() + leftoverAgeMs(executor.config) + 60_000;
      expect(await executor.cleanupLeftovers(later, [`${LABELS.worker}=${foreignWorker}`])).toBe(1);
      expect(await containersOf(foreignWorker)).toEqual([]);
      expect(await executor.cleanupLeftovers(later, [`${LABELS.worker}=${workerId}`])).toBe(0);
      expect((await containersOf(workerId)).map((c) => c.Id)).toEqual([mine.id]);
    } finally {
      await foreign.remove({ force: true }).catch(() => undefined);
      await mine.remove({ force: true });
      await executor.close();
      fs.rmSync(packagesDir, { recursive: true, force: true });
    }
  });
});
