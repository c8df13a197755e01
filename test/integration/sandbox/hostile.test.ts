/**
 * Hostile scripts, in the warm pool and in strict (cold) mode. Each must end with the right
 * status, ended by the right party (the harness's time limit, the kernel's limits), leave no
 * process or container behind, and not disturb the next run.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SandboxResult } from '../../../activities/sandbox';
import { containersOf, peakProcesses, strayProcesses, testConfig, waitFor, warmExecutor } from './sandbox-env';

const NEXT_RUN = 'import os\nprint("fine", len(os.listdir(os.environ["CACHE_DIR"])), len(os.listdir("/tmp")))\n';

describe.each(['pool', 'cold'] as const)('hostile scripts (%s mode)', (mode) => {
  const workerId = `hostile-${mode}-${process.pid}`;
  const sandbox = warmExecutor(workerId, mode);

  /** After every hostile run: a clean next run, and nothing left but the pool's own containers. */
  async function expectUnaffected(): Promise<void> {
    const next = await sandbox.executor.run({ script: NEXT_RUN, timeoutSec: 20 });
    expect(next.status).toBe('passed');
    // A fresh scratch directory, and /tmp emptied of whatever the hostile run left there.
    expect(next.stdout.trim()).toBe('fine 0 0');
    const settled = await waitFor(async () => {
      const containers = await containersOf(workerId);
      if (containers.length > (mode === 'pool' ? 1 : 0)) return false;
      for (const c of containers) if ((await strayProcesses(c.Id)).length > 0) return false;
      return true;
    });
    expect(settled).toBe(true);
  }

  async function run(script: string, timeoutSec = 20): Promise<SandboxResult> {
    return sandbox.executor.run({ script, timeoutSec });
  }

  test('an endless loop times out and its whole process tree is killed', async () => {
    const result = await run(
      'import subprocess, sys\nsubprocess.Popen([sys.executable, "-c", "while True: pass"])\nwhile True:\n    pass\n',
      3,
    );
    expect(result.status).toBe('timeout');
    expect(result.exitCode).toBeNull();
    // Ended by the harness at the script's own limit (expectUnaffected: with its child process).
    expect(result.stderr).toMatch(/exceeded its 3s time limit and was killed/);
    await expectUnaffected();
  });

  test('a fork bomb is capped by the process limit and ends at the timeout', async () => {
    // The container's process count, read from Docker while the bomb runs: it reaches the pids
    // limit (the bomb was seen) and never passes it.
    const running = run('import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n', 5);
    const peak = await peakProcesses(workerId, running);
    const result = await running;
    expect(result.status).toBe('timeout');
    const { pidsLimit } = testConfig();
    expect(peak).toBeGreaterThanOrEqual(pidsLimit / 2);
    expect(peak).toBeLessThanOrEqual(pidsLimit);
    await expectUnaffected();
  });

  test('allocating 10 GB ends as oom', async () => {
    const result = await run('x = bytearray(10 * 1024 ** 3)\nprint(len(x))\n');
    expect(result.status).toBe('oom');
    await expectUnaffected();
  });

  test('touching memory page by page past the limit is killed as oom', async () => {
    const result = await run('chunks = []\nwhile True:\n    chunks.append(bytearray(64 * 1024 * 1024))\n');
    expect(result.status).toBe('oom');
    await expectUnaffected();
  });

  test('filling the disk stops at the scratch size', async () => {
    const result = await run(
      'import os\nwith open(os.path.join(os.environ["CACHE_DIR"], "big"), "wb") as f:\n    while True:\n        f.write(b"0" * (1 << 20))\n',
    );
    expect(result.status).toBe('error');
    expect(result.exception?.type).toBe('OSError');
    expect(result.exception?.message).toMatch(/No space left on device/);
    await expectUnaffected();
  });

  test('writing outside the scratch directory fails everywhere', async () => {
    const script = [
      'import os',
      'targets = ["/etc/passwd", "/usr/bin/python3", "/opt/repost/harness/launch.py", "/opt/repost/packages/x.py", "/root/x", "/x", "/usr/lib/python3.11/os.py"]',
      'written = []',
      'for t in targets:',
      '    try:',
      '        with open(t, "a") as f:',
      '            f.write("owned")',
      '        written.append(t)',
      '    except OSError:',
      '        pass',
      'assert not written, f"wrote to {written}"',
      'print("all refused")',
    ].join('\n');
    const result = await run(script);
    expect(result.status).toBe('passed');
    expect(result.stdout).toContain('all refused');
    await expectUnaffected();
  });

  test('host files are out of reach', async () => {
    const marker = path.join(os.tmpdir(), `repost-host-marker-${process.pid}`);
    fs.writeFileSync(marker, 'host secret');
    try {
      const script = [
        'import os',
        `assert not os.path.exists(${JSON.stringify(marker)})`,
        'assert not os.path.exists("/var/run/docker.sock") and not os.path.exists("/run/docker.sock")',
        'assert os.getuid() == 10001',
        'with open("/proc/self/status") as f:',
        '    caps = {l.split(":")[0]: l.split(":")[1].strip() for l in f if l.startswith("Cap")}',
        'assert int(caps["CapEff"], 16) == 0 and int(caps["CapBnd"], 16) == 0, caps',
        'try:',
        '    open("/etc/shadow").read()',
        '    raise SystemExit("read /etc/shadow")',
        'except PermissionError:',
        '    pass',
        'print("isolated")',
      ].join('\n');
      const result = await run(script);
      expect(result.stderr).toBe('');
      expect(result.status).toBe('passed');
      await expectUnaffected();
    } finally {
      fs.rmSync(marker, { force: true });
    }
  });

  test('sockets to the outside and to the host find no network', async () => {
    // Nothing leaves the container: it has only a loopback interface and no route at all.
    // 192.0.2.1 is TEST-NET-1, reserved for documentation; the connect fails before any packet.
    const script = [
      'import errno, os, socket',
      'assert sorted(os.listdir("/sys/class/net")) == ["lo"], os.listdir("/sys/class/net")',
      'with open("/proc/net/route") as f:',
      '    assert len(f.read().strip().splitlines()) == 1, "a route exists"',
      'for addr in [("192.0.2.1", 80)]:',
      '    s = socket.socket()',
      '    s.settimeout(2)',
      '    try:',
      '        s.connect(addr)',
      '        raise SystemExit(f"connected to {addr}")',
      '    except OSError as e:',
      '        assert e.errno == errno.ENETUNREACH, e',
      'try:',
      '    socket.getaddrinfo("pypi.org", 443)',
      '    raise SystemExit("resolved a name")',
      'except socket.gaierror:',
      '    pass',
      'print("offline")',
    ].join('\n');
    const result = await run(script);
    expect(result.stderr).toBe('');
    expect(result.status).toBe('passed');
    await expectUnaffected();
  });

  test('killing its parent, PID 1 and every process it can ends only the script', async () => {
    // PID 1 runs under another uid: signalling it is refused.
    const init = await run('import os, signal\ntry:\n    os.kill(1, signal.SIGKILL)\nexcept PermissionError:\n    print("refused")\n');
    expect(init.status).toBe('passed');
    expect(init.stdout.trim()).toBe('refused');
    // Its parent is the supervisor, under another uid: signalling it is refused too.
    const result = await run('import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept PermissionError:\n    print("refused", os.getppid() > 1)\n');
    expect(result.status).toBe('passed');
    expect(result.stdout.trim()).toBe('refused True');
    const all = await run('import os, signal\nos.kill(-1, signal.SIGKILL)\nos.kill(os.getpid(), signal.SIGKILL)\n');
    expect(all.status).toBe('error');
    await expectUnaffected();
  });

  test('a fake result file and os._exit(0) get the real coverage, not the fake one, and no pass', async () => {
    const fake = { notes: [], coverage: { target: 'f', startLine: 1, endLine: 4, hasBranches: true, rate: 1, lines: { total: 3, covered: 3, rate: 1 },
      branches: { total: 2, taken: 2, rate: 1 }, arcs: { total: 4, taken: 4 }, missingLines: [], missingBranches: [], summary: 'forged' } };
    const forge = (ending: string) =>
      [
        'def f(x):',
        '    if x > 0:',
        '        return 1',
        '    return 0',
        'import json, os',
        'f(1)',
        'here = os.path.dirname(os.path.abspath(__file__))',
        `open(os.path.join(here, ".repost-result.json"), "w").write(${JSON.stringify(JSON.stringify(fake))})`,
        ending,
      ].join('\n');
    const exited = await sandbox.executor.run({ script: forge('os._exit(0)'), coverage: { functionName: 'f' }, timeoutSec: 20 });
    // os._exit(0) skips the end of the main module: the supervisor does not count it as a pass.
    expect(exited).toMatchObject({ status: 'error', exitCode: 125 });
    expect(exited.coverage).toMatchObject({ target: 'f', rate: 0.5, branches: { total: 2, taken: 1 }, missingLines: [4] });
    expect(exited.coverage?.summary).not.toBe('forged');
    // Killing itself leaves no coverage to send: none is reported, never the forged one.
    const killed = await sandbox.executor.run({ script: forge('import signal\nos.kill(os.getpid(), signal.SIGKILL)'), coverage: { functionName: 'f' }, timeoutSec: 20 });
    expect(killed.status).toBe('error');
    expect(killed.coverage).toBeNull();
    await expectUnaffected();
  });

  test('a daemon killing every Python process, closed outputs and a killed supervisor: the next script and AST comparison are unaffected', async () => {
    const killer = [
      'import os, signal, time',
      'if os.fork() == 0:',
      '    os.setsid()',
      '    if os.fork() > 0:',
      '        os._exit(0)',
      '    null = os.open(os.devnull, os.O_RDWR)',
      '    for fd in (0, 1, 2):',
      '        os.dup2(null, fd)',
      '    me = os.getpid()',
      '    time.sleep(0.3)',
      '    while True:',
      '        for entry in os.listdir("/proc"):',
      '            if entry.isdigit() and int(entry) != me:',
      '                try:',
      '                    with open(f"/proc/{entry}/cmdline", "rb") as fh:',
      '                        if b"python" in fh.read():',
      '                            os.kill(int(entry), signal.SIGKILL)',
      '                except OSError:',
      '                    pass',
      'os.wait()',
      'refused = False',
      'try:',
      '    os.kill(os.getppid(), signal.SIGKILL)',
      'except PermissionError:',
      '    refused = True',
      'print("supervisor kill refused:", refused, flush=True)',
      'os.close(1)',
      'os.close(2)',
      'time.sleep(30)',
    ].join('\n');
    const recycledBefore = sandbox.executor.poolStats?.recycled ?? 0;
    const result = await run(killer);
    // The daemon killed the script; the supervisor survived, ended the daemon and reported.
    expect(result.stdout).toBe('supervisor kill refused: True\n');
    expect(result).toMatchObject({ status: 'error', exitCode: 137 });
    expect(result.notes.join('\n')).not.toMatch(/supervisor left no result/);
    // Ended by a signal: that container is never lent again.
    if (mode === 'pool') expect(sandbox.executor.poolStats!.recycled).toBe(recycledBefore + 1);
    const trivial = await sandbox.executor.run({ script: 'print(sum(range(10)))\n', timeoutSec: 20 });
    expect(trivial).toMatchObject({ status: 'passed', exitCode: 0, stdout: '45\n' });
    expect(await sandbox.executor.astEquivalent('def f(a):\n    return a + 1\n', 'def f(a):\n    # same\n    return (a + 1)\n')).toEqual({ equivalent: true, difference: null });
    expect(await sandbox.executor.astNormalize(['x  =  1'])).toEqual([{ ok: true, normalized: 'x = 1' }]);
    await expectUnaffected();
  });

  test('the time limit is enforced inside the container, before the executor would step in', async () => {
    const result = await run('import time\nwhile True:\n    time.sleep(0.1)\n', 2);
    expect(result.status).toBe('timeout');
    // The executor removes the container only 10 s after the limit; the harness ended the run
    // first and said so (the executor's own kill leaves no such line).
    expect(result.stderr).toMatch(/exceeded its 2s time limit/);
    await expectUnaffected();
  });

  test('printing 100 MB keeps a bounded head and tail', async () => {
    const result = await run(
      'import sys\nline = "x" * 1023 + "\\n"\nsys.stdout.write("FIRST\\n")\nfor _ in range(100 * 1024):\n    sys.stdout.write(line)\nsys.stdout.write("LAST\\n")\n',
      60,
    );
    expect(result.status).toBe('passed');
    expect(result.truncated).toBe(true);
    expect(result.stdout.length).toBeLessThan(20 * 1024);
    expect(result.stdout.startsWith('FIRST\n')).toBe(true);
    expect(result.stdout.trimEnd().endsWith('LAST')).toBe(true);
    expect(result.stdout).toMatch(/bytes of output cut/);
    await expectUnaffected();
  });
});
