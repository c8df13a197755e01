"""Mutation testing in one run: the script with its ground truth, then each mutant, forked from a
warm parent. Started by launch.py (the supervisor) when the request holds `mutation`:

    {"target": "name_new_implementation" | "Class.name_new_implementation", "cap": 30, "seed": 0,
     "mutantTimeoutSec": null, "budgetSec": null}

1. The mutants are made by a child as the scripts' uid (repost_mutants.py: Python's `ast` on the
   script's text; nothing of the script runs), answered through a pipe to the supervisor.
2. The supervisor forks the *warm parent*, which becomes the scripts' uid, enters the run's
   environment (folder, variables, packages) as a run's child does, imports the modules the script
   imports at its top level (so each mutant does not pay for them again), empties the writable
   folders, blocks every signal it can and waits. It is non-dumpable (its uid changed), so a
   mutant of the same uid can neither trace it nor read its memory, and no blockable signal
   reaches it.
3. For each job (the ground truth first: the *control*; then each mutant) the supervisor sends its
   number; the warm parent forks a child that restores the signal mask, closes the parent's
   pipes, writes the run folder with that script and runs it as `__main__` exactly as a run's
   child does (the harness's reporter on its own channel; no coverage), and ends as the
   interpreter ends a script (non-daemon threads joined, atexit handlers run, streams flushed)
   without tearing its modules down, which would cost more than most jobs. The warm parent waits for
   it, kills whatever it left (`kill(-1)` as the scripts' uid reaches every process of that uid
   but itself), empties the writable folders, removes the IPC objects it made and tells the
   supervisor the child's wait status. Every job starts from the same warm parent and empty
   folders: nothing one job does reaches the next. Every job's stdout and stderr are the warm
   parent's pipes to the supervisor (the control's output is passed on as the run's, the mutants'
   dropped), so no job can tell from its descriptors whether it is the control; and the control
   runs once more among the mutants, at a place drawn at random, with their time limit: tests that
   pass only as the first job fail the run there.
4. The supervisor decides each job's verdict as for a run: a pass needs the observed status 0 and
   exactly one clean report of a finished main module on the harness's channel. It enforces each
   job's time limit itself: past it, it kills every process in the container (the warm parent
   too) and starts a new warm parent for the next job; the same when the warm parent died, was
   stopped, could not clean, or the container's OOM-kill counter moved. A mutant is *killed* when
   its run does not pass (a timeout is killed, and counted apart) and *survived* when it passes.

The control runs with the run's time limit; when it does not pass with the modules imported
beforehand it runs again in a warm parent that imports nothing (some modules cannot be forked
after import), and the mutants then run that way. A mutant's time limit is `mutantTimeoutSec`,
or else 2 s plus 10 times the control's time, never more than the run's limit: a mutant that
loops forever costs seconds, not the whole limit. The whole run stops starting mutants once
`budgetSec` (default five times the run's limit) is spent; those left are `not_run`.

The result (written by launch.py to the supervisor's folder) holds, under `mutation`, the
mutants' operator, line, diff and outcome; the run's own status is the control's.
"""
import json
import os
import select
import signal
import struct
import sys
import time

CONTROL = -1
MAX_STATUS_LINE = 64 * 1024
OVERFLOW = b"\n[more than MAX_REPORT_BYTES]\n"
PR_SET_DUMPABLE = 4
OUTCOMES = ("killed", "survived", "timeout", "not_run")


def _send_line(fd, message):
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(fd, data) :]


def _read_exactly(fd, size):
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


# --- 1. the mutants


def _generate(launch, script, spec, timeout):
    """repost_mutants.handle in a child as the scripts' uid; (answer, None) or (None, what went wrong)."""
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            launch._become_script_user()
            os.chdir("/scratch")
            import repost_mutants

            request = {"script": script, "target": spec["target"], "cap": spec.get("cap", 30), "seed": spec.get("seed", 0), "keepLeftOut": bool(spec.get("keepLeftOut"))}
            try:
                answer = repost_mutants.handle(request)
            except (LookupError, SyntaxError, ValueError, RecursionError) as exc:
                answer = {"error": f"{type(exc).__name__}: {exc}"}
            data = json.dumps(answer).encode()
            while data:
                data = data[os.write(write_fd, data) :]
        except BaseException as exc:  # noqa: BLE001
            print(f"[repost-sandbox] making the mutants failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            sys.stderr.flush()
            os._exit(1)
        os._exit(0)
    os.close(write_fd)
    status, timed_out, data = launch._supervise(pid, read_fd, timeout)
    os.close(read_fd)
    if timed_out:
        return None, "making the mutants took longer than the run's time limit"
    if os.waitstatus_to_exitcode(status) != 0:
        return None, "making the mutants failed"
    try:
        answer = json.loads(data)
    except ValueError:
        return None, "the mutants could not be read"
    if not isinstance(answer, dict):
        return None, "the mutants could not be read"
    if isinstance(answer.get("error"), str):
        return None, answer["error"]
    mutants = answer.get("mutants")
    if not isinstance(mutants, list) or not all(isinstance(m, dict) and isinstance(m.get("script"), str) for m in mutants):
        return None, "the mutants could not be read"
    return answer, None


# --- 2. and 3. the warm parent and its jobs


def _preimport(source, script_path):
    """Runs the script's top-level imports (and those in a top-level `try`) once, each on its own;
    what fails is left for the script itself to meet."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return
    statements = []
    for node in tree.body:
        for statement in node.body if isinstance(node, ast.Try) else [node]:
            if isinstance(statement, ast.Import) or (
                isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module != "__future__"
            ):
                statements.append(statement)
    for statement in statements:
        try:
            code = compile(ast.Module(body=[statement], type_ignores=[]), script_path, "exec")
            exec(code, {"__name__": "repost_preimport", "__builtins__": __builtins__})
        except BaseException:  # noqa: BLE001 - the script meets the same failure when it runs
            pass


def _wipe(hygiene):
    """hygiene.wipe(), after giving every folder back its owner's rights (a job may take them away)."""
    for root in hygiene.WRITABLE:
        for dirpath, dirnames, _ in os.walk(root):
            for name in dirnames:
                path = os.path.join(dirpath, name)
                try:
                    if not os.path.islink(path):
                        os.chmod(path, 0o700)
                except OSError:
                    pass
    return hygiene.wipe()


def _warm_parent(launch, request, script_path, mutants, preimport, control_r, status_w, report_w):
    """The warm parent's life (in a forked child); never returns."""
    try:
        # Below its jobs' 1000: the OOM killer takes a job that grew, not the parent it came from.
        launch._become_script_user(oom_score_adj=999)
        # Changing uid made it non-dumpable already; said explicitly, since a job of the same uid
        # could otherwise trace it or read its memory through /proc.
        import ctypes

        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        # What an earlier warm parent's jobs left (it was killed with them) goes first.
        left = _wipe(launch.hygiene)
        if left:
            _send_line(status_w, {"kind": "ready", "unclean": left[:5]})
            os._exit(1)
        run_dir = request["runDir"]
        launch._prepare_run_dir(run_dir, request["_files"], script_path, request["script"])
        launch._enter_script_env(request, run_dir, script_path)
        # What every job's exit needs, imported once here.
        import atexit  # noqa: F401
        import threading  # noqa: F401

        if preimport:
            _preimport(request["script"], script_path)
        sys.stdout.flush()
        sys.stderr.flush()
        saved_mask = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        left = _wipe(launch.hygiene)
        _send_line(status_w, {"kind": "ready", "unclean": left[:5]})
    except BaseException as exc:  # noqa: BLE001
        print(f"[repost-sandbox] the warm parent failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.stderr.flush()
        os._exit(1)
    while True:
        raw = _read_exactly(control_r, 4)
        if raw is None:
            os._exit(0)  # the supervisor is done with it
        index = struct.unpack(">i", raw)[0]
        script = request["script"] if index == CONTROL else mutants[index]["script"]
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _job(launch, request, script_path, script, saved_mask, (control_r, status_w), report_w)
        _, status = os.waitpid(pid, 0)
        survivors = launch.hygiene.kill_others()
        left = _wipe(launch.hygiene) + launch.hygiene.clear_ipc()
        _send_line(status_w, {"kind": "done", "status": status, "survivors": survivors, "unclean": left[:5]})


def _job(launch, request, script_path, script, saved_mask, parent_fds, report_w):
    """One job in a fork of the warm parent: the script as a run's child runs it; never returns.

    The control and every mutant start alike: the same descriptors (stdout and stderr are the warm
    parent's pipes to the supervisor, whichever job it is), environment, folder and arguments."""
    import posix

    try:
        for fd in parent_fds:
            os.close(fd)
        signal.pthread_sigmask(signal.SIG_SETMASK, saved_mask)
        _raise_oom_score()
        run_dir = request["runDir"]
        launch._prepare_run_dir(run_dir, request["_files"], script_path, script)
        os.chdir(run_dir)
        reporter = launch._Reporter(report_w, None, script_path)
        os._exit = posix._exit = reporter.exit_hook(posix._exit)
    except BaseException as exc:  # noqa: BLE001
        print(f"[repost-sandbox] harness failed before the script: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.stderr.flush()
        posix._exit(1)
    launch._run_script(reporter, None, script_path, request, fast_exit=True)


def _raise_oom_score():
    """The job's oom_score_adj from the warm parent's 999 to a run's 1000. Its /proc files belong to
    root while it is not dumpable, so it becomes dumpable for the write, and not again after."""
    import ctypes

    prctl = ctypes.CDLL(None).prctl
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")
    except OSError:
        pass
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


class WarmParent:
    """The supervisor's handle on the current warm parent: starts one, runs jobs in it, replaces it."""

    def __init__(self, launch, request, script_path, mutants, preimport):
        self.launch, self.request, self.script_path, self.mutants = launch, request, script_path, mutants
        self.preimport = preimport
        self.pid = None
        self.starts = 0
        self.outputs = {}
        # Whether what jobs print reaches the supervisor's own stdout and stderr (the first control's).
        self.forward = True

    def start(self, deadline):
        """Forks a warm parent and waits until it is ready; None, or why it could not start."""
        control_r, control_w = os.pipe()
        status_r, status_w = os.pipe()
        report_r, report_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            for fd in (control_w, status_r, report_r, out_r, err_r):
                os.close(fd)
            # Its stdout and stderr (and so every job's) are pipes, as a run's are the exec's.
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.close(out_w)
            os.close(err_w)
            _warm_parent(self.launch, self.request, self.script_path, self.mutants, self.preimport, control_r, status_w, report_w)
        for fd in (control_r, status_w, report_w, out_w, err_w):
            os.close(fd)
        self.starts += 1
        self.pid, self.control_w, self.status_r, self.report_r = pid, control_w, status_r, report_r
        self.outputs = {out_r: 1, err_r: 2}
        self.pidfd = os.pidfd_open(pid)
        self.status_buffer = b""
        message, _, died, timed_out = self._wait(deadline)
        if message is None or message.get("kind") != "ready":
            self.stop()
            return "it did not start in time" if timed_out else "it ended before it was ready"
        if message.get("unclean"):
            self.stop()
            return f"the folders it must empty could not be emptied ({', '.join(map(str, message['unclean']))})"
        return None

    def stop(self):
        """Kills every process in the container (this one's and its jobs') and forgets it."""
        if self.pid is None:
            return
        self.launch.hygiene.kill_others()
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        # What its jobs left in the kernel (the warm parent could remove only its own uid's).
        self.launch.hygiene.clear_ipc()
        for fd in (self.control_w, self.status_r, self.report_r, self.pidfd, *self.outputs):
            try:
                os.close(fd)
            except OSError:
                pass
        self.pid = None

    def _pass_output(self, fd):
        """What a job printed: the supervisor's own stdout or stderr gets it while `forward` is set
        (the first control's, as a run's), else it is read and dropped. False at its end."""
        chunk = os.read(fd, 65536)
        if not chunk:
            del self.outputs[fd]
            os.close(fd)
            return False
        if self.forward:
            while chunk:
                try:
                    chunk = chunk[os.write(self.outputs[fd], chunk) :]
                except OSError:
                    break
        return True

    def _read_report_chunk(self, report):
        chunk = os.read(self.report_r, 65536)
        if chunk:
            if len(report) + len(chunk) <= self.launch.MAX_REPORT_BYTES:
                report += chunk
            elif not report.endswith(OVERFLOW):
                report += OVERFLOW  # not the harness's protocol: the report is refused
        return chunk

    def _wait(self, deadline):
        """Reads the job's report and the parent's status until a status line, the parent's end or the
        deadline: (status message or None, report bytes, parent died, timed out)."""
        report = bytearray()
        while True:
            line_end = self.status_buffer.find(b"\n")
            if line_end >= 0:
                line, self.status_buffer = self.status_buffer[:line_end], self.status_buffer[line_end + 1 :]
                try:
                    message = json.loads(line)
                except ValueError:
                    return None, bytes(report), True, False
                return (message if isinstance(message, dict) else None), bytes(report), False, False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None, bytes(report), False, True
            ready = select.select([self.status_r, self.report_r, self.pidfd, *self.outputs], [], [], remaining)[0]
            for fd in ready:
                if fd in self.outputs:
                    self._pass_output(fd)
            if self.report_r in ready:
                self._read_report_chunk(report)
            if self.status_r in ready:
                chunk = os.read(self.status_r, 65536)
                if not chunk or len(self.status_buffer) > MAX_STATUS_LINE:
                    return None, bytes(report), True, False
                self.status_buffer += chunk
                continue
            if self.pidfd in ready and self.status_r not in ready:
                return None, bytes(report), True, False

    def _drain(self, report):
        """What the job (dead by now, with everything it started) wrote and was not read yet."""
        while select.select([self.report_r], [], [], 0)[0]:
            if not self._read_report_chunk(report):
                break
        for fd in list(self.outputs):
            while fd in self.outputs and select.select([fd], [], [], 0)[0] and self._pass_output(fd):
                pass
        return bytes(report)

    def run(self, index, limit):
        """One job: {"outcome", "kind", "exitCode", "ms", "end", "note"}; None when no warm parent could start."""
        hygiene = self.launch.hygiene
        started = time.monotonic()
        oom_before = hygiene.oom_kills()
        try:
            os.write(self.control_w, struct.pack(">i", index))
        except OSError:
            return self._lost(started, "the warm parent was gone before the job started")
        message, report, died, timed_out = self._wait(started + limit)
        ms = round((time.monotonic() - started) * 1000)
        if timed_out or died or message is None or message.get("kind") != "done" or not isinstance(message.get("status"), int):
            self.stop()  # everything in the container dies; the next job gets a new warm parent
            if timed_out:
                return {"outcome": "timeout", "kind": "timeout", "exitCode": None, "ms": ms, "end": None, "note": None}
            return self._lost(started, "the job ended its warm parent")
        report = self._drain(bytearray(report))
        if message.get("survivors") or message.get("unclean"):
            self.stop()
        oom = hygiene.oom_kills() > oom_before
        if oom:
            self.stop()
        observed = os.waitstatus_to_exitcode(message["status"])
        observed = observed if observed >= 0 else 128 - observed
        end, _, problem = self.launch._read_report(report, None)
        code, note = self.launch._verdict(observed, end, problem)
        if code == 0:
            return {"outcome": "survived", "kind": None, "exitCode": 0, "ms": ms, "end": end, "note": None}
        if oom:
            kind = "oom"
        elif code == self.launch.UNCONFIRMED_EXIT:
            kind = "unconfirmed"
        elif observed >= 128:
            kind = f"signal {observed - 128}"
        elif end is not None and isinstance(end.get("exception"), str):
            kind = end["exception"]
        else:
            kind = f"exit {code}"
        return {"outcome": "killed", "kind": kind[:100], "exitCode": code, "ms": ms, "end": end, "note": note}

    def _lost(self, started, note):
        return {"outcome": "killed", "kind": "lost", "exitCode": None, "ms": round((time.monotonic() - started) * 1000), "end": None, "note": note}


# --- 4. the supervisor's side


def supervise(request, script_path, timeout, launch):
    """The whole mutation run; returns the supervisor's exit status (the control's)."""
    spec = request["mutation"]
    timeout = timeout if timeout > 0 else 120.0
    budget = float(spec.get("budgetSec") or 5 * timeout)
    budget_end = time.monotonic() + budget
    notes = []
    answer, problem = _generate(launch, request["script"], spec, timeout)
    if problem:
        notes.append(f"no mutants: {problem}")
        answer = {"candidates": 0, "examined": 0, "duplicates": 0, "invalid": 0, "mutants": []}
    mutants = answer["mutants"]

    warm = WarmParent(launch, request, script_path, mutants, preimport=True)
    control, why = _run_control(warm, timeout)
    if control is None or control["outcome"] != "survived":
        first = f"the ground truth ended {control['kind']}" if control else f"the warm parent could not start: {why}"
        warm.stop()
        # Its output so far was the first attempt's; what follows is the second's.
        print("[repost-sandbox] the ground truth runs again in a warm parent that imports nothing", file=sys.stderr)
        sys.stderr.flush()
        warm = WarmParent(launch, request, script_path, mutants, preimport=False)
        control, why = _run_control(warm, timeout)
        if control is not None and control["outcome"] == "survived":
            notes.append(f"{first} with the script's modules imported in the warm parent; each job imports them itself")
    mode = "warm" if warm.preimport else "plain"
    # From here on no job's output is read: the control's was the run's.
    warm.forward = False

    results = []
    mutant_limit = None
    again = None
    if control is not None and control["outcome"] == "survived":
        fixed = spec.get("mutantTimeoutSec")
        mutant_limit = float(fixed) if fixed else min(timeout, 2.0 + 10.0 * control["ms"] / 1000.0)
        # The ground truth runs once more, as a job like the mutants' at a place among them no job
        # can know (see _again).
        again_before = int.from_bytes(os.urandom(4), "big") % len(mutants) if mutants else None
        for index in range(len(mutants)):
            if index == again_before:
                again = _again(warm, mutant_limit, timeout)
            left = budget_end - time.monotonic()
            if left < min(mutant_limit, 1.0):
                notes.append(f"mutants {index + 1} to {len(mutants)} were not run: the run's budget of {budget:g}s was spent")
                break
            if warm.pid is None:
                why = warm.start(time.monotonic() + min(timeout, left))
                if why:
                    notes.append(f"mutants {index + 1} to {len(mutants)} were not run: a new warm parent could not start: {why}")
                    break
            results.append(warm.run(index, min(mutant_limit, budget_end - time.monotonic())))
        if mutants and again is None:
            again = _again(warm, mutant_limit, timeout)
    warm.stop()
    if mutants and control is not None and control["outcome"] == "survived" and (again is None or again["outcome"] != "survived"):
        how = f"it ended {again['kind']}" if again else "no warm parent could start for it"
        why = f"the ground truth did not pass when it ran again among the mutants as one of their jobs ({how}): its tests tell the runs apart (or fail at random), so what the mutants did says nothing"
        notes.append(why)
        print(f"[repost-sandbox] {why}", file=sys.stderr)
        sys.stderr.flush()
        again = again or {"end": None}
        code = again.get("exitCode")
        control = {**again, "outcome": "killed", "ms": control["ms"], "exitCode": code if isinstance(code, int) and code != 0 else 1, "note": why}
    while len(results) < len(mutants):
        results.append({"outcome": "not_run", "kind": None, "exitCode": None, "ms": 0})

    mutation = {
        "target": spec["target"],
        "mode": mode,
        "candidates": answer["candidates"],
        "examined": answer["examined"],
        "duplicates": answer["duplicates"],
        "invalid": answer["invalid"],
        "leftOut": answer.get("leftOut", {}),
        "controlMs": control["ms"] if control else None,
        "mutantTimeoutSec": mutant_limit,
        "budgetSec": budget,
        "warmStarts": warm.starts,
        "mutants": [
            {"operator": m.get("operator"), "line": m.get("line"), "diff": m.get("diff"), "outcome": r["outcome"], "kind": r["kind"], "ms": r["ms"], "leftOut": m.get("leftOut")}
            for m, r in zip(mutants, results)
        ],
        "notes": notes,
    }
    return _finish(launch, request, control, timeout, mutation)


def _again(warm, limit, timeout):
    """The control once more, among the mutants and with their time limit: a job no test can tell
    from a mutant's. A script whose tests behave differently when they are not the first job (a
    higher pid, a later start, something the first job left) fails here, so its mutants' outcomes
    are not believed. None when no warm parent could start."""
    if warm.pid is None and warm.start(time.monotonic() + timeout):
        return None
    return warm.run(CONTROL, limit)


def _run_control(warm, timeout):
    """The script with its ground truth in a new warm parent: (job result or None, why not started)."""
    why = warm.start(time.monotonic() + timeout)
    if why:
        return None, why
    return warm.run(CONTROL, timeout), None


def _finish(launch, request, control, timeout, mutation):
    """Writes the result and returns the control's status as the run's."""
    run_dir, source = request["runDir"], request["script"]
    end = control.get("end") if control else None
    if control is not None and control["outcome"] == "timeout":
        launch._write_result(run_dir, source, None, None, True, None, mutation=mutation)
        print(f"[repost-sandbox] the run exceeded its {timeout:g}s time limit and was killed", file=sys.stderr)
        sys.stderr.flush()
        return launch.TIMEOUT_EXIT
    launch._write_result(run_dir, source, None, end, False, control.get("note") if control else None, mutation=mutation)
    if control is None:
        print("[repost-sandbox] the script could not be run: " + "; ".join(mutation["notes"]), file=sys.stderr)
        sys.stderr.flush()
        return 1
    code = control["exitCode"]
    return code if isinstance(code, int) else 1
