/**
 * A mutation run's jobs cannot tell the ground truth from a mutant. Tests that check nothing about
 * the results but fail whenever they sense a mutant's run would otherwise get a perfect score.
 * Through the real pool, three adversaries:
 *
 * - context: everything a job can read about how it runs (what stdout and stderr are, isatty, the
 *   descriptors open, the environment, the folder, argv, sys.path, the modules loaded, the parent
 *   process, uids, signal mask, capabilities, OOM score, limits, the processes it can see), taken
 *   from the ground truth's job in one mutation run and demanded in the next: the ground truth
 *   passes and every mutant survives;
 * - what an earlier job left: a System V segment, a semaphore set, a message queue, a POSIX queue
 *   and files in every writable place, made by each job and looked for by the next: nothing is
 *   found, every mutant survives;
 * - order: tests that pass only in the first job (the ground truth runs first): the ground truth
 *   runs again among the mutants, fails there, and the run is not scored.
 */
import { testMutants } from '../../../activities/sandbox/mutation';
import { warmExecutor } from './sandbox-env';

const lines = (...l: string[]) => `${l.join('\n')}\n`;

const ORIGINAL = lines('def pick(a, b):', '    if a > b:', '        return a - b', '    return a + b * 2');

/** Everything about its own run a job can read, with the run folder's random name blanked. */
const CONTEXT = lines(
  'import ctypes, json, os, re, resource, stat, sys',
  '',
  'def _kind(fd):',
  '    try:',
  '        m = os.fstat(fd).st_mode',
  '    except OSError:',
  '        return None',
  '    return "fifo" if stat.S_ISFIFO(m) else "chr" if stat.S_ISCHR(m) else "reg" if stat.S_ISREG(m) else "sock" if stat.S_ISSOCK(m) else "other"',
  '',
  'def _target(fd):',
  '    t = os.readlink(f"/proc/self/fd/{fd}")',
  '    return re.sub(r"\\[\\d+\\]|/proc/\\d+", "#", t)',
  '',
  'def context():',
  '    fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))',
  '    ppid = os.getppid()',
  '    def parent(name):',
  '        try:',
  '            return open(f"/proc/{ppid}/{name}", "rb").read().decode("utf-8", "replace")',
  '        except OSError as e:',
  '            return type(e).__name__',
  '    status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)',
  '    mine = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid() and os.stat(f"/proc/{p}").st_uid == os.getuid()]',
  '    umask = os.umask(0o22); os.umask(umask)',
  '    found = {',
  '        "stdio": [(fd, _kind(fd), os.isatty(fd), _target(fd)) for fd in (0, 1, 2)],',
  '        "fds": [(fd, _kind(fd), _target(fd)) for fd in fds if fd > 2 and os.path.exists(f"/proc/self/fd/{fd}")],',
  '        "env": dict(os.environ), "cwd": os.getcwd(), "argv": sys.argv, "path": sys.path, "modules": sorted(sys.modules),',
  '        "parent": [parent("comm"), parent("cmdline"), os.stat(f"/proc/{ppid}").st_uid, parent("oom_score_adj")],',
  '        "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getgroups()], "umask": umask, "same_uid_processes": len(mine),',
  '        "status": {k: status[k].strip() for k in ("SigBlk", "SigIgn", "SigCgt", "CapEff", "CapBnd", "NoNewPrivs", "Seccomp", "Threads")},',
  '        "oom": open("/proc/self/oom_score_adj").read(), "dumpable": ctypes.CDLL(None).prctl(3, 0, 0, 0, 0),',
  '        "rlimits": [resource.getrlimit(r) for r in (resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC, resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_CORE)],',
  '        "flags": list(sys.flags), "cwd_listing": sorted(os.listdir(".")), "time_left": signal_alarm_left(),',
  '    }',
  '    return json.loads(re.sub(r"run-[0-9a-f]+", "run-X", json.dumps(found)))',
  '',
  'def signal_alarm_left():',
  '    import signal',
  '    left = signal.alarm(0)',
  '    return left',
);

function contextScript(expected: string | null): string {
  return lines(
    CONTEXT,
    ORIGINAL,
    `EXPECTED = ${expected === null ? 'None' : JSON.stringify(expected)}`,
    '',
    'def test_pick():',
    '    pick(3, 1), pick_new_implementation(3, 1)',
    '    seen = context()',
    '    if EXPECTED is None:',
    '        print(json.dumps(seen))',
    '    else:',
    '        expected = json.loads(EXPECTED)',
    '        differ = sorted(k for k in expected if expected[k] != seen.get(k))',
    '        assert not differ, differ',
    '',
    'if __name__ == "__main__":',
    '    test_pick()',
  );
}

/** Each job leaves every kind of thing behind, and fails when it finds what an earlier one left. */
const LEFT_BEHIND = lines(
  'import ctypes, os',
  'libc = ctypes.CDLL(None, use_errno=True)',
  'rt = ctypes.CDLL("librt.so.1", use_errno=True)',
  'PLACES = ["/tmp/mark", "/dev/shm/mark", "/home/user/mark", "/scratch/mark"]',
  '',
  'def earlier_job_was_here():',
  '    found = [libc.shmget(0x4D4B, 0, 0) >= 0, libc.semget(0x4D4B, 0, 0) >= 0, libc.msgget(0x4D4B, 0) >= 0]',
  '    q = rt.mq_open(b"/mark", os.O_RDONLY)',
  '    found.append(q >= 0)',
  '    found += [os.path.exists(p) for p in PLACES]',
  '    return any(found)',
  '',
  'def leave_marks():',
  '    assert libc.shmget(0x4D4B, 4096, 0o1666) >= 0',
  '    assert libc.semget(0x4D4B, 1, 0o1666) >= 0',
  '    assert libc.msgget(0x4D4B, 0o1666) >= 0',
  '    assert rt.mq_open(b"/mark", os.O_CREAT | os.O_RDWR, 0o666, None) >= 0',
  '    for p in PLACES:',
  '        open(p, "w").write("x")',
  '',
  ORIGINAL,
  'def test_pick():',
  '    assert not earlier_job_was_here(), "a mutant: an earlier job left its marks"',
  '    leave_marks()',
  '    pick(3, 1), pick_new_implementation(3, 1)',
  '',
  'if __name__ == "__main__":',
  '    test_pick()',
);

/** Passes only as the first job its warm parent forks (the ground truth is run first). */
const FIRST_ONLY = lines(
  'import os',
  ORIGINAL,
  'def test_pick():',
  '    pick(3, 1), pick_new_implementation(3, 1)',
  '    assert os.getpid() == os.getppid() + 1, "not the first job: a mutant"',
  '',
  'if __name__ == "__main__":',
  '    test_pick()',
);

/** Compares its own script with any script text it can read on the container's command lines. */
const READS_COMMAND_LINES = lines(
  'import os',
  ORIGINAL,
  'def original_elsewhere():',
  '    mine = open(__file__).read()',
  '    for p in os.listdir("/proc"):',
  '        if p.isdigit():',
  '            try:',
  '                line = open(f"/proc/{p}/cmdline", "rb").read().decode("utf-8", "replace")',
  '            except OSError:',
  '                continue',
  '            if "def pick(a, b)" in line and mine not in line.replace("\\x00", ""):',
  '                return True',
  '    return False',
  '',
  'def test_pick():',
  '    pick(3, 1), pick_new_implementation(3, 1)',
  '    assert not original_elsewhere(), "a mutant: the ground truth\'s script is on a command line"',
  '',
  'if __name__ == "__main__":',
  '    test_pick()',
);

describe('mutation runs: a job cannot tell the ground truth from a mutant', () => {
  const workerId = `mutant-context-${process.pid}`;
  const settings = { cap: 6, seed: 1 };
  const sandbox = warmExecutor(workerId);

  const run = (script: string) => testMutants(sandbox.executor, { script, originalFunction: ORIGINAL, functionName: 'pick' }, settings);

  test('everything a job can read about its run is the ground truth’s: tests demanding it kill no mutant', async () => {
    const first = await run(contextScript(null));
    expect(first.summary).toMatchObject({ status: 'scored', groundTruth: 'passed', killed: 0 });
    // The ground truth's output is the run's; the mutants' is read by no one.
    const seen = JSON.parse(first.result.stdout.trim()) as { stdio: [number, string, boolean, string][] };
    expect(seen.stdio.map(([fd, kind, tty]) => [fd, kind, tty])).toEqual([[0, 'chr', false], [1, 'fifo', false], [2, 'fifo', false]]);

    const demanding = await run(contextScript(first.result.stdout.trim()));
    expect(demanding.result.stderr).not.toMatch(/AssertionError/);
    expect(demanding.summary).toMatchObject({ status: 'scored', groundTruth: 'passed', killed: 0, score: 0 });
    expect(demanding.summary.survived).toBe(demanding.summary.made);
    expect(demanding.summary.made).toBeGreaterThanOrEqual(4);
  });

  test('nothing one job leaves (IPC objects of every kind, files) reaches the next: no mutant is killed by finding it', async () => {
    const outcome = await run(LEFT_BEHIND);
    expect(outcome.summary).toMatchObject({ status: 'scored', groundTruth: 'passed', killed: 0, score: 0 });
    expect(outcome.summary.survived).toBe(outcome.summary.made);
  });

  test('no command line in the container holds the ground truth’s script for a mutant to compare with its own', async () => {
    const outcome = await run(READS_COMMAND_LINES);
    expect(outcome.summary).toMatchObject({ status: 'scored', groundTruth: 'passed', killed: 0, score: 0 });
  });

  test('tests that pass only in the first job fail the ground truth run again among the mutants: the run is not scored', async () => {
    const outcome = await run(FIRST_ONLY);
    expect(outcome.summary.status).toBe('ground_truth_failed');
    expect(outcome.summary.score).toBeNull();
    expect(outcome.result.stderr).toMatch(/the ground truth did not pass when it ran again among the mutants/);
  });
});
