"""Runs one script (or one of the harness's JSON helpers) inside a sandbox container.

Started as `python3 -I launch.py <fields>` where the request travels as command-line arguments
(`name count part...`, a value being its parts joined; `file:<path>` for extra files), or as
`launch.py -` with the request as JSON on stdin when it is too large or holds NUL characters.
`-I` keeps anything an earlier run left (a user site directory, PYTHON* variables) from running
before the container is cleaned.

This process is the supervisor. It runs as root inside the container with only CAP_KILL,
CAP_SETUID, CAP_SETGID and CAP_SETPCAP (no other capability, no new privileges, a read-only root,
no network), and the script runs as the scripts' uid (10001) in a child forked from it that gave
all of that up: so the script can neither signal, trace nor outlive its supervisor, and cannot
read or write what the supervisor keeps (RESULT_DIR, a root-only tmpfs). Then:

1. the container is made clean by a child as the scripts' uid (their leftover processes killed,
   the writable mounts emptied, OOM history checked), then by the supervisor (every other process
   killed, the IPC objects an earlier run left removed); if that fails it exits with DIRTY_EXIT
   and the caller retries on a fresh container;
2. it forks the child, which drops to the scripts' uid with an empty capability bounding set,
   writes the script and its files into a fresh run directory and runs the script as
   `python3 script.py` would (a fresh `__main__`, under coverage.py with branch measurement when
   asked), its stdout/stderr being the exec's; the supervisor keeps the script's source in its
   own memory and waits. A helper request (`helper`: imports.py, ast_equiv.py, ast_normalize.py)
   runs that helper's `handle` in the child instead, its JSON answer on stdout, after the same
   cleaning;
3. the supervisor enforces the run's time limit itself (a script whose worker died does not run
   forever), then kills every other process in the container, and only then writes its result
   to RESULT_DIR/<run directory's name>.json: coverage computed from the arcs the child sent
   through a pipe and the source it kept, whether the child timed out, and the module a
   ModuleNotFoundError named. The exit status is the script's (128+n when a signal n ended it);
   TIMEOUT_EXIT with `timedOut` in the result means the supervisor's time limit ended it.

Imports are kept to what the interpreter has loaded anyway: this file's start-up cost is part of
every run's overhead. Everything else is imported only when needed.
"""
import os
import sys

HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HARNESS_DIR)
import repost_hygiene as hygiene  # noqa: E402  (prefixed: a script may have its own `hygiene`)

BAKED_PACKAGES = "/opt/repost/packages"
DIRTY_EXIT = 199
DIRTY_MARKER = "[repost-sandbox] container not clean:"
SCRIPT_UID = 10001
# The candidate's own uid in an isolated run (repost_isolated.py); its group is the scripts' (the
# run's shared folders), its uid another, so it can neither signal, trace nor read the script's process.
CANDIDATE_UID = 10003
# Root-only (a tmpfs of mode 0700): the supervisor's results and its copy of the source.
RESULT_DIR = "/run/repost"
PR_CAPBSET_DROP = 24
CAP_LAST = 63


def _drop_bounding_set():
    """Empties this process's capability bounding set (what every child inherits); keeps its own."""
    if os.getuid() != 0:
        return
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    for cap in range(CAP_LAST + 1):
        prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the kernel's last capability: fine


def _become_script_user(oom_score_adj=1000):
    """In a forked child: the scripts' uid and gid, no supplementary group; every capability is gone."""
    # The kernel's OOM killer takes the script's processes before the supervisor's. Set while this
    # process is still root: once its uid changed it is not dumpable, and its /proc files belong
    # to root, so it could no longer write it.
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write(str(oom_score_adj))
    except OSError:
        pass
    if os.getuid() == 0:
        os.setgroups([])
        os.setgid(SCRIPT_UID)
        os.setuid(SCRIPT_UID)


def _become_candidate_user():
    """In a forked child: the candidate's uid, the scripts' group (the run's shared folders), no capability."""
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")
    except OSError:
        pass
    if os.getuid() == 0:
        os.setgroups([])
        os.setgid(SCRIPT_UID)
        os.setuid(CANDIDATE_UID)


def _candidate_left_something():
    """Whether a process or a top-level entry of a writable mount belongs to the candidate's uid."""
    for root in hygiene.WRITABLE:
        try:
            for name in os.listdir(root):
                if os.lstat(os.path.join(root, name)).st_uid == CANDIDATE_UID:
                    return True
        except OSError:
            continue
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == CANDIDATE_UID:
                    return True
            except OSError:
                continue
    return False


def _clean_as_candidate():
    """What a candidate left in the writable mounts goes first, removed by its own uid (sticky /tmp)."""
    if not _candidate_left_something():
        return
    pid = os.fork()
    if pid == 0:
        try:
            _become_candidate_user()
            hygiene.kill_others()
            hygiene.wipe()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _clean_container():
    """make_clean() in a child as the scripts' uid (only it may empty their folders); its reasons."""
    import json

    _clean_as_candidate()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            _become_script_user()
            os.write(write_fd, json.dumps(hygiene.make_clean()).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks = []
    while True:
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    os.waitpid(pid, 0)
    try:
        reasons = json.loads(b"".join(chunks))
    except ValueError:
        return ["the cleaning did not finish"]
    # What the scripts' uid cannot reach, the supervisor can: nothing else may be running now.
    survivors = hygiene.kill_others()
    if survivors:
        reasons.append(f"{survivors} processes survived SIGKILL")
    # Kernel objects an earlier run left (shared memory, semaphores, message queues), whoever's.
    return reasons + hygiene.clear_ipc()


def _safe_join(root, name):
    path = os.path.normpath(os.path.join(root, name))
    if os.path.isabs(name) or not path.startswith(root + os.sep):
        raise ValueError(f"file name escapes the run directory: {name!r}")
    return path


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _exit_code_of(exc):
    """Mirrors how the interpreter turns SystemExit into a status."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _print_uncaught(exc, script_path):
    """Prints the traceback as Python would, starting at the script's first frame."""
    import traceback

    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != script_path:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb, file=sys.stderr)


def _read_request(argv):
    if argv == ["-"]:
        import json

        return json.loads(sys.stdin.buffer.read().decode("utf-8"))
    request, files, i = {}, {}, 0
    while i < len(argv):
        name, count = argv[i], int(argv[i + 1])
        value = "".join(argv[i + 2 : i + 2 + count])
        i += 2 + count
        if name.startswith("file:"):
            files[name[5:]] = value
        else:
            request[name] = value
    request["files"] = files
    if request.get("coverage"):
        request["coverage"] = {"functionName": request["coverage"]}
    return request


def _run_as_main(script_path, source=None, extra=None, rewrite=None):
    """What `python3 script.py` does: a fresh `__main__` module, the compiled file executed in it.
    With `source` (an isolated run) the script is not on disk: its lines are kept for tracebacks.
    With `rewrite` (an isolated run) the script's tree is compiled after it (the compared values in
    a failed assert's message: repost_assert_values.py); a script that does not parse is compiled as
    it is, so its SyntaxError is the same."""
    if source is None:
        with open(script_path, "rb") as fh:
            source = fh.read()
    main = type(sys)("__main__")
    main.__file__ = script_path
    main.__cached__ = None
    main.__loader__ = None
    main.__spec__ = None
    main.__builtins__ = __builtins__
    if extra:
        # The script is not on disk: tracebacks read its lines from the loader when they print.
        main.__loader__ = extra["__repost_candidate__"].source_loader(source)
        main.__dict__.update(extra)
    sys.modules["__main__"] = main
    tree = rewrite(source, script_path) if rewrite is not None else None
    exec(compile(tree if tree is not None else source, script_path, "exec"), main.__dict__)


TIMEOUT_EXIT = 124
# The process ended with status 0 but the supervisor cannot confirm a pass (see _verdict).
UNCONFIRMED_EXIT = 125


class _Reporter:
    """The child's side of the pipe to the supervisor: the harness's own messages, one line each.

    `snippet` lines (the test runner's results, in order), then exactly one `end`: the status
    the harness saw the script end with, whether its main module finished (False when it called
    os._exit), the module a ModuleNotFoundError named, and the measured arcs. The functions it
    needs are taken before the script runs, so replacing `os.write` or `json.dumps` later does
    not change what it sends.
    """

    def __init__(self, fd, cov, script_path, host=None):
        import json

        self.fd, self.cov, self.script_path, self.host = fd, cov, script_path, host
        self.pid = os.getpid()
        self.sent = False
        self._write, self._getpid, self._dumps = os.write, os.getpid, json.dumps

    def _send(self, message):
        data = (self._dumps(message) + "\n").encode()
        try:
            while data:
                data = data[self._write(self.fd, data):]
        except OSError:
            pass

    def _mine(self):
        return not self.sent and self._getpid() == self.pid

    def snippet(self, index, status, detail, duration=None, assertion=None):
        if self._mine():
            message = {"kind": "snippet", "index": index, "status": status, "detail": detail}
            if duration is not None:
                message["durationSec"] = round(max(0.0, float(duration)), 6)
            if assertion is not None:
                message["assertion"] = assertion
            self._send(message)

    def load_failed(self, detail):
        if self._mine():
            self._send({"kind": "load", "detail": detail})

    def end(self, status, completed, missing_module=None, exited_in=None, exception=None):
        if not self._mine():
            return
        self.sent = True
        message = {"kind": "end", "status": status, "completed": completed, "missingModule": missing_module, "exitedIn": exited_in, "exception": exception}
        if self.host is not None:
            message["candidate"] = self.host.failure
            message["candidateCalls"] = self.host.calls
        if self.cov is not None:
            try:
                self.cov.stop()
                message["arcs"] = self.cov.get_data().arcs(self.script_path) or []
            except Exception as exc:  # noqa: BLE001 - the script may have broken coverage itself
                message["note"] = f"coverage could not be collected: {type(exc).__name__}: {exc}"
        self._send(message)

    def exit_hook(self, real_exit):
        def _exit(code):
            self.end(code & 0xFF if isinstance(code, int) else 1, completed=False)
            real_exit(code)

        return _exit


def _new_implementation_in(tb):
    """The `*_new_implementation` function a SystemExit came through uncaught, if any: the code
    under test ended the script, so the tests after that call never ran."""
    while tb is not None:
        name = tb.tb_frame.f_code.co_name
        if name.endswith("_new_implementation"):
            return name
        tb = tb.tb_next
    return None


def _prepare_run_dir(run_dir, files, script_path, source, shared=False):
    """As the scripts' uid: the run directory with the script and its files. `shared` (an isolated
    run): the folders the tests use are the candidate's too (its group may write them; umask 002),
    and the script, which holds the ground truth, is not written at all."""
    os.makedirs(run_dir, mode=0o700)
    os.makedirs(os.path.join(run_dir, "cache"))
    # RepoST's records write to /home/user/tmp (a tmpfs in the sandbox); make it as they expect.
    if os.path.isdir("/home/user") and os.access("/home/user", os.W_OK):
        os.makedirs("/home/user/tmp", exist_ok=True)
        if shared:
            os.chmod("/home/user/tmp", 0o2775)
    if shared:
        os.chmod(run_dir, 0o2770)
        os.umask(0o002)
    for path, text in files:
        _write(path, text)
    if not shared:
        _write(script_path, source)


def _enter_script_env(request, run_dir, script_path, isolated=False):
    """As the scripts' uid, in the run directory: the environment `python3 script.py` sees there."""
    cache_dir = os.path.join(run_dir, "cache")
    os.chdir(run_dir)
    os.environ["CACHE_DIR"] = cache_dir
    os.environ["TMPDIR"] = "/tmp"
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    os.environ["PYTHONUNBUFFERED"] = "1"
    sys.dont_write_bytecode = True
    # Packages: the run's environment from the store, then any baked into a dataset image.
    package_dirs = [d for d in (request.get("packageDir"), BAKED_PACKAGES) if d and os.path.isdir(d) and os.listdir(d)]
    # sys.path as `python3 script.py` has it: the script's folder first, never the harness's. In an
    # isolated run that folder is the candidate's to write too, so nothing is imported from it.
    sys.path[:] = ([] if isolated else [run_dir]) + [p for p in sys.path if p != HARNESS_DIR]
    if package_dirs:
        import site

        os.environ["PYTHONPATH"] = os.pathsep.join(package_dirs)
        for d in package_dirs:
            site.addsitedir(d)  # also honours .pth files, which PYTHONPATH alone would not
    else:
        os.environ.pop("PYTHONPATH", None)
    sys.argv = [script_path]


def _harness_module(name):
    """Imports one of the harness's modules from its folder, which the script's sys.path lacks."""
    sys.path.insert(0, HARNESS_DIR)
    try:
        return __import__(name)
    finally:
        sys.path.remove(HARNESS_DIR)


def _script_packages(source, isolated):
    """Top-level names of the non-standard-library modules a script imports at its top level (what
    the candidate's values may be made of)."""
    names = {n.split(".")[0] for n in isolated.top_level_imports(source)}
    return sorted(n for n in names if n not in sys.stdlib_module_names)


def _child(request, run_dir, script_path, target, fd, call_fd=None):
    """Runs the script in this (forked) process; never returns. With `call_fd` (an isolated run)
    the script's `<name>_new_implementation` calls the candidate's process through it."""
    try:
        _become_script_user()
        isolated = call_fd is not None
        _prepare_run_dir(run_dir, request["_files"], script_path, request["script"], shared=isolated)
        _enter_script_env(request, run_dir, script_path, isolated=isolated)
        if request.get("clockOffsetSec") is not None:
            _harness_module("repost_clock").shift(float(request["clockOffsetSec"]))

        host = None
        if isolated:
            spec = request["candidate"]
            isolated_module = _harness_module("repost_isolated")
            host = isolated_module.Host(call_fd, spec["target"], spec["kind"], _script_packages(request["script"], isolated_module))
            assert_values = _harness_module("repost_assert_values")
            request["_extra"] = {"__repost_candidate__": host, assert_values.NAME: assert_values.Asserts()}
            request["_rewrite"] = assert_values.rewrite
        cov = None
        if target:
            import coverage

            cov = coverage.Coverage(branch=True, data_file=None, include=[script_path], config_file=False)
        reporter = _Reporter(fd, cov, script_path, host)
        runner = _harness_module("repost_test_runner") if request.get("runner") is not None else None
        # A script that ends its process without the interpreter's shutdown still reports first.
        import posix

        os._exit = posix._exit = reporter.exit_hook(posix._exit)
        if cov is not None:
            cov.start()
    except BaseException as exc:  # noqa: BLE001 - the harness itself failed: say so, end the child
        print(f"[repost-sandbox] harness failed before the script: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.stderr.flush()
        os._exit(1)
    _run_script(reporter, runner, script_path, request)


def _exit_like_the_interpreter(status):
    """What the interpreter's own exit does that a script can see (its non-daemon threads joined,
    its atexit handlers run, its streams flushed), without tearing its modules down: for the jobs
    of a mutation run, where that teardown would be most of a job's time. The status was sent."""
    import atexit
    import threading

    for step in (threading._shutdown, atexit._run_exitfuncs, sys.stdout.flush, sys.stderr.flush):
        try:
            step()
        except BaseException:  # noqa: BLE001 - as at the interpreter's exit: reported, not fatal
            pass
    os._exit(status)


def _run_script(reporter, runner, script_path, request, fast_exit=False):
    """Runs the script (or the test runner on it) as `__main__` and reports how it ended; never returns."""
    real_exit = sys.exit
    status, missing, exited_in, exception = 0, None, None, None
    try:
        if runner is not None and request.get("candidate"):
            runner.run(script_path, request["runner"], reporter, request["script"], request.get("_extra"), request.get("_rewrite"))
        elif runner is not None:
            runner.run(script_path, request["runner"], reporter)
        elif request.get("candidate"):
            _run_as_main(script_path, request["script"], request.get("_extra"), request.get("_rewrite"))
        else:
            _run_as_main(script_path)
    except SystemExit as exc:
        status = _exit_code_of(exc)
        exited_in = _new_implementation_in(exc.__traceback__)
    except BaseException as exc:  # noqa: BLE001 - everything uncaught is the script's failure
        status = 1
        exception = type(exc).__name__
        if isinstance(exc, ModuleNotFoundError) and isinstance(exc.name, str):
            missing = exc.name
        _print_uncaught(exc, script_path)
    reporter.end(status, completed=True, missing_module=missing, exited_in=exited_in, exception=exception)
    # Like the interpreter's own shutdown: atexit handlers and non-daemon threads still run. The
    # supervisor holds the run to the status sent above, whatever the process ends with.
    if fast_exit:
        _exit_like_the_interpreter(status)
    real_exit(status)
    os._exit(status)


def _start_candidate(request, run_dir, script_path, report_fds):
    """Forks the candidate's process (repost_isolated.serve) and returns the trusted side's end of
    their socket. The candidate keeps nothing of the supervisor's: no report pipe, no request, its
    own uid; it waits for the script's calls."""
    # Two pipes, not a socket: nothing to import for them.
    to_candidate_r, to_candidate_w = os.pipe()
    to_trusted_r, to_trusted_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            for fd in (to_candidate_w, to_trusted_r) + tuple(report_fds):
                os.close(fd)
            keep = sorted((to_candidate_r, to_trusted_w))
            os.closerange(3, keep[0])
            os.closerange(keep[0] + 1, keep[1])
            os.closerange(keep[1] + 1, 4096)
            isolated = sys.modules["repost_isolated"]
            _become_candidate_user()
            os.umask(0o002)
            # No folder of its own: it works where the script's process works (each call carries its
            # working folder, and the module loads in the run directory), with the script's HOME and
            # cache folder, which /scratch's mode 0710 lets its group reach; until then the root.
            os.chdir("/")
            os.environ.update({"TMPDIR": "/tmp", "CACHE_DIR": os.path.join(run_dir, "cache"), "PYTHONDONTWRITEBYTECODE": "1"})
            sys.dont_write_bytecode = True
            package_dirs = [d for d in (request.get("packageDir"), BAKED_PACKAGES) if d and os.path.isdir(d) and os.listdir(d)]
            sys.path[:] = [p for p in sys.path if p != HARNESS_DIR]
            if package_dirs:
                import site

                os.environ["PYTHONPATH"] = os.pathsep.join(package_dirs)
                for d in package_dirs:
                    site.addsitedir(d)
            # The module is the script's definitions: its file name is the script's (never written).
            sys.argv = [script_path]
            isolated.serve((to_candidate_r, to_trusted_w), request["candidate"], script_path, run_dir)
        except BaseException as exc:  # noqa: BLE001 - the trusted side sees the channel close
            print(f"[repost-sandbox] the candidate's process could not start: {type(exc).__name__}: {exc}", file=sys.stderr)
        finally:
            os._exit(0)
    os.close(to_candidate_r)
    os.close(to_trusted_w)
    return (to_trusted_r, to_candidate_w)


def _supervise(pid, fd, timeout):
    """Waits for the child (up to `timeout` seconds) reading what it sends; returns (wait status, timed out, bytes)."""
    import select
    import time

    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None  # old kernels: poll the child instead
    chunks, reading, timed_out, status = [], True, False, None
    size = 0
    deadline = time.monotonic() + timeout if timeout > 0 else None
    while status is None:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            timed_out = True
            hygiene.kill_others()
            status = os.waitpid(pid, 0)[1]
            break
        wait = remaining if pidfd is not None else (0.01 if remaining is None else min(remaining, 0.01))
        watched = ([pidfd] if pidfd is not None else []) + ([fd] if reading else [])
        ready = select.select(watched, [], [], wait)[0]
        if fd in ready:
            chunk = os.read(fd, 65536)
            if chunk:
                size += len(chunk)
                if size <= MAX_REPORT_BYTES:
                    chunks.append(chunk)
            else:
                reading = False
        if pidfd is None or pidfd in ready:
            done, wait_status = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                status = wait_status
    # What the script left running dies now; then nothing but this process can write anywhere.
    hygiene.kill_others()
    while select.select([fd], [], [], 1.0)[0]:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        size += len(chunk)
        if size <= MAX_REPORT_BYTES:
            chunks.append(chunk)
    if size > MAX_REPORT_BYTES:
        chunks.append(b"\n[more than MAX_REPORT_BYTES]\n")  # not JSON: the report is refused
    return status, timed_out, b"".join(chunks)


MAX_REPORT_BYTES = 64 * 1024 * 1024
SNIPPET_STATUSES = ("pass", "fail", "value", "error")


def _runner_assertion(a):
    """Whether a test result's failed assertion is as the test runner sends it (bounded: repost_test_runner.py)."""
    return (
        isinstance(a, dict)
        and set(a) == {"line", "function", "message"}
        and isinstance(a["line"], int)
        and not isinstance(a["line"], bool)
        and 0 < a["line"] < 10_000_000
        and isinstance(a["function"], str)
        and len(a["function"]) <= 200
        and isinstance(a["message"], str)
        and len(a["message"]) <= 500
    )


def _read_report(data, snippets_expected):
    """The child's messages, held to the protocol: (end message or None, runner report or None, what was wrong or None).

    Anything else in the pipe (a line that is not the harness's, snippets out of order, a
    second `end`, anything after it) means someone other than the harness wrote there: the whole
    report is refused.
    """
    import json

    end, load, snippets = None, None, []
    # Every message ends with a newline; an unterminated tail was cut by the process's death.
    for line in data.decode("utf-8", "replace").split("\n")[:-1]:
        if line == "":
            continue
        try:
            message = json.loads(line)
        except ValueError:
            return None, None, "a line that is not the harness's"
        kind = message.get("kind") if isinstance(message, dict) else None
        if end is not None:
            return None, None, "a message after the harness's final one"
        if kind == "end" and isinstance(message.get("status"), int) and isinstance(message.get("completed"), bool):
            end = message
        elif kind == "snippet" and snippets_expected is not None and load is None:
            if message.get("index") != len(snippets) or message.get("status") not in SNIPPET_STATUSES or not isinstance(message.get("detail"), str):
                return None, None, "a test result out of the harness's order"
            if len(snippets) >= snippets_expected:
                return None, None, "more test results than tests"
            entry = {"status": message["status"], "detail": message["detail"]}
            if "durationSec" in message:
                d = message["durationSec"]
                if isinstance(d, bool) or not isinstance(d, (int, float)) or not 0 <= d < 1e7:
                    return None, None, "a test result with a duration the harness does not send"
                entry["durationSec"] = d
            if "assertion" in message:
                if not _runner_assertion(message["assertion"]):
                    return None, None, "a test result with an assertion the harness does not send"
                entry["assertion"] = message["assertion"]
            snippets.append(entry)
        elif kind == "load" and snippets_expected is not None and load is None and not snippets and isinstance(message.get("detail"), str):
            load = message["detail"]
        else:
            return None, None, "a message the harness does not send"
    runner = {"loadFailure": load, "snippets": snippets} if snippets_expected is not None else None
    return end, runner, None


def _verdict(code, end, problem):
    """The run's exit status from what the supervisor observed (the child's own status `code`) and
    the harness's report: a zero status passes only with one clean report of a finished main
    module that ended with status 0. Returns (exit status, a note or None)."""
    if code != 0:
        return code, (f"the harness's report channel held {problem}: the report is refused" if problem else None)
    if problem:
        return UNCONFIRMED_EXIT, f"the harness's report channel held {problem}: the report is refused and the run cannot pass"
    if end is None:
        return UNCONFIRMED_EXIT, "the script's process ended with status 0 without the harness's report (it ended itself past the harness): the run cannot pass"
    if not end["completed"]:
        return UNCONFIRMED_EXIT, "the script ended its process with os._exit(0) before its main module finished: the run cannot pass"
    if end["status"] == 0 and isinstance(end.get("exitedIn"), str):
        return UNCONFIRMED_EXIT, f"{end['exitedIn']} ended the script with SystemExit(0), so the tests after that call never ran: the run cannot pass"
    if end["status"] != 0:
        return end["status"], f"the script's process ended with status 0 but its main module ended with status {end['status']} (sys.exit or the process's end was tampered with): status {end['status']} is kept"
    if isinstance(end.get("candidate"), dict):
        return 1, f"the candidate failed the run ({end['candidate'].get('kind')}): {end['candidate'].get('detail')}"
    return 0, None


def _result_path(run_dir):
    return os.path.join(RESULT_DIR, os.path.basename(run_dir) + ".json")


def _write_result(run_dir, source, target, message, timed_out, verdict=None, runner=None, problem=None, mutation=None):
    """The run's result: the verdict's note, the test runner's results, and coverage of the target
    span from the child's arcs and the source this process kept (none when the report was refused)."""
    import json

    result = {"notes": [], "coverage": None, "timedOut": timed_out, "missingModule": None, "verdict": verdict, "runner": runner}
    if mutation is not None:
        result["mutation"] = mutation
    if message is not None and isinstance(message.get("missingModule"), str):
        result["missingModule"] = message["missingModule"]
    if message is not None and isinstance(message.get("candidate"), dict):
        result["candidate"] = {"kind": str(message["candidate"].get("kind"))[:40], "detail": str(message["candidate"].get("detail"))[:500]}
    if target:
        if problem:
            result["notes"].append(f"no coverage: the harness's report channel held {problem}")
        elif message is None or not isinstance(message.get("arcs"), list):
            result["notes"].append(
                (message or {}).get("note") or "the script ended its process before its coverage could be sent (killed by a signal or by its own doing)"
            )
        else:
            try:
                sys.path.insert(0, HARNESS_DIR)
                from repost_coverage_span import span_report
                import coverage

                # The supervisor's own copy of the source, where the script never could write.
                kept = os.path.join(RESULT_DIR, os.path.basename(run_dir), "eval_script.py")
                _write(kept, source)
                cov = coverage.Coverage(branch=True, data_file=None, include=[kept], config_file=False)
                cov.get_data().add_arcs({kept: [tuple(a) for a in message["arcs"] if isinstance(a, list) and len(a) == 2]})
                result["coverage"] = span_report(cov, kept, target)
            except LookupError as exc:
                result["notes"].append(str(exc))
            except Exception as exc:  # noqa: BLE001
                result["notes"].append(f"coverage could not be measured: {type(exc).__name__}: {exc}")
    text = json.dumps(result)
    try:
        with open(_result_path(run_dir), "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError:
        pass  # the caller notes the missing result
    if _RESULT_TRAILER[0]:
        _send_result_trailer(text.encode("utf-8"))


# Whether the caller (the executor) reads the result off the end of stdout: set from the request.
_RESULT_TRAILER = [False]
RESULT_TRAILER_MARKER = b"\x1e[repost-result] "


def _send_result_trailer(payload):
    """Ends the exec's stdout with the result (newline, JSON, newline, marker, its length in bytes,
    newline), which the executor reads from the end by that length: a second `docker exec` to read
    the file is saved. Only when no other process is left, so nothing can be written after it; the
    file stays the answer otherwise."""
    if hygiene._own_processes():
        return
    sys.stdout.flush()
    data = b"\n" + payload + b"\n" + RESULT_TRAILER_MARKER + str(len(payload)).encode() + b"\n"
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


def _empty_result_dir():
    """Results of earlier runs go: each is read right after its own run."""
    if not os.path.isdir(RESULT_DIR):
        return
    for name in os.listdir(RESULT_DIR):
        path = os.path.join(RESULT_DIR, name)
        if os.path.isdir(path) and not os.path.islink(path):
            hygiene._remove_tree(path)
        else:
            os.unlink(path)


def _run_helper(request, timeout):
    """A JSON helper in a child as the scripts' uid, after the same cleaning as a script; its exit status."""
    import json

    name = request["helper"]
    if name not in HELPERS:
        print(f"[repost-sandbox] unknown helper {name!r}", file=sys.stderr)
        return 2
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            os.close(write_fd)
            _become_script_user()
            os.chdir("/scratch")
            module = __import__(name[:-3])
            answer = json.dumps(module.handle(json.loads(request["input"])))
            sys.stdout.write(answer)
            sys.stdout.flush()
        except BaseException as exc:  # noqa: BLE001
            print(f"[repost-sandbox] {name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            sys.stderr.flush()
            os._exit(1)
        os._exit(0)
    os.close(write_fd)
    status, timed_out, _ = _supervise(pid, read_fd, timeout)
    if timed_out:
        return TIMEOUT_EXIT
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


HELPERS = ("imports.py", "ast_equiv.py", "ast_normalize.py")


MAX_HASH_SEED = 4294967295


def _apply_hash_seed(request, argv):
    """A run asking for a PYTHONHASHSEED (stability runs): this process starts again with it.

    `-I` (how the supervisor is started) ignores every PYTHON* variable, PYTHONHASHSEED included,
    and the seed can only be set when the interpreter starts. So the supervisor, before it does
    anything else, executes itself again with `-s -P` (no user site, no script folder on the path:
    what `-I` gives besides `-E`) and an environment it builds itself: the one it has without any
    PYTHON* variable, plus PYTHONHASHSEED. Nothing of a script has run yet; the run's child and the
    script inherit the seed. Returns when the seed is already the interpreter's.
    """
    seed = request.get("hashSeed")
    if seed is None or seed == "":
        return
    seed = int(seed)
    if not 0 <= seed <= MAX_HASH_SEED:
        print(f"[repost-sandbox] hashSeed {seed} is not between 0 and {MAX_HASH_SEED}", file=sys.stderr)
        sys.stderr.flush()
        os._exit(2)
    if not sys.flags.ignore_environment and os.environ.get("PYTHONHASHSEED") == str(seed):
        return
    import json

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONHASHSEED"] = str(seed)
    if argv == ["-"]:
        # The request came on stdin, which is read: it goes to the new process the same way.
        fd = os.memfd_create("repost-request")
        data = json.dumps(request).encode("utf-8")
        while data:
            data = data[os.write(fd, data) :]
        os.lseek(fd, 0, os.SEEK_SET)
        os.dup2(fd, 0)
        os.close(fd)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-s", "-P", os.path.abspath(__file__)] + argv, env)


def main():
    request = _read_request(sys.argv[1:])
    _apply_hash_seed(request, sys.argv[1:])
    # Read: the request leaves the command line, which every process in the container can read.
    request_hidden = hygiene.hide_request() or sys.argv[1:] == ["-"]
    _drop_bounding_set()
    reasons = _clean_container()
    if reasons:
        print(DIRTY_MARKER, "; ".join(reasons), file=sys.stderr)
        sys.stderr.flush()
        os._exit(DIRTY_EXIT)
    _empty_result_dir()
    # The script sees an empty stdin, like a non-interactive run.
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(0, "r", closefd=False)
    timeout = float(request.get("timeoutSec") or 0)
    if request.get("helper"):
        os._exit(_run_helper(request, timeout))

    run_dir = request["runDir"]
    source = request["script"]
    _RESULT_TRAILER[0] = request.get("resultTrailer") in ("1", True)
    target = (request.get("coverage") or {}).get("functionName")
    if isinstance(request.get("runner"), str):
        import json

        request["runner"] = json.loads(request["runner"])
    if isinstance(request.get("mutation"), str):
        import json

        request["mutation"] = json.loads(request["mutation"])
    # Paths are checked here; the child (as the scripts' uid) writes them.
    try:
        request["_files"] = [(_safe_join(run_dir, name), text) for name, text in (request.get("files") or {}).items()]
        script_path = _safe_join(run_dir, request.get("scriptName") or "eval_script.py")
    except ValueError as exc:
        print(f"[repost-sandbox] {exc}", file=sys.stderr)
        sys.stderr.flush()
        _write_result(run_dir, source, None, None, False)
        os._exit(2)
    if isinstance(request.get("mutation"), dict):
        # Mutation testing: the script with its ground truth, then each mutant, in forks of one
        # warm parent (see repost_mutation_run.py); the exit status is the ground truth's.
        import repost_mutation_run

        os._exit(repost_mutation_run.supervise(request, script_path, timeout, sys.modules[__name__]))

    if isinstance(request.get("candidate"), str):
        import json

        request["candidate"] = json.loads(request["candidate"])
    if isinstance(request.get("candidate"), dict):
        if not request_hidden:
            print("[repost-sandbox] the request could not be removed from the command line: an isolated run does not start", file=sys.stderr)
            sys.stderr.flush()
            _write_result(run_dir, source, None, None, False)
            os._exit(2)
        # Imported once here, before the two processes fork: each would otherwise load it for itself.
        import repost_assert_values  # noqa: F401
        import repost_isolated  # noqa: F401
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    call_fd = None
    if isinstance(request.get("candidate"), dict):
        call_fd = _start_candidate(request, run_dir, script_path, (read_fd, write_fd))
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(request, run_dir, script_path, target, write_fd, call_fd)
    os.close(write_fd)
    if call_fd is not None:
        for fd in call_fd:
            os.close(fd)
    status, timed_out, data = _supervise(pid, read_fd, timeout)
    runner_request = request.get("runner")
    expected = len(runner_request["snippets"]) if isinstance(runner_request, dict) else None
    end, runner, problem = _read_report(data, expected)
    if timed_out:
        _write_result(run_dir, source, target, end, True, None, runner, problem)
        print(f"[repost-sandbox] the run exceeded its {timeout:g}s time limit and was killed", file=sys.stderr)
        sys.stderr.flush()
        os._exit(TIMEOUT_EXIT)
    observed = os.waitstatus_to_exitcode(status)
    observed = observed if observed >= 0 else 128 - observed
    code, note = _verdict(observed, end, problem)
    _write_result(run_dir, source, target, end, False, note, runner, problem)
    if code == UNCONFIRMED_EXIT and observed == 0:
        # The process said 0 and nothing on stderr says otherwise: the reason it is not a pass goes there.
        print(f"[repost-sandbox] {note}", file=sys.stderr)
        sys.stderr.flush()
    os._exit(code)


# The supervisor itself failed (an exception of its own): above 127, so the executor reads the
# result file (if any) rather than the end of stdout, where the script's output may be last.
SUPERVISOR_FAILED_EXIT = 198

if __name__ == "__main__":
    supervisor = os.getpid()
    try:
        main()
    except BaseException:  # noqa: BLE001 - said on stderr; the exit status says the supervisor failed
        if os.getpid() != supervisor:
            raise  # a forked child (the script's SystemExit ends its process as the interpreter would)
        import traceback

        print("[repost-sandbox] the supervisor failed:", file=sys.stderr)
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(SUPERVISOR_FAILED_EXIT)
