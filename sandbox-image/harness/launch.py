"""Runs one script inside a sandbox container, in a fresh run directory.

Started as `python3 -I launch.py <fields>` where the request travels as command-line arguments
(`name count part...`, a value being its parts joined; `file:<path>` for extra files), or as
`launch.py -` with the request as JSON on stdin when it is too large or holds NUL characters.
`-I` keeps anything an earlier run left (a user site directory, PYTHON* variables) from running
before the container is cleaned. Then:

1. the container is made clean: leftover processes of the scripts' uid killed, the writable
   mounts emptied, OOM history checked; if that fails it exits with DIRTY_EXIT and the caller
   retries on a fresh container;
2. the script and its files are written into a fresh run directory, and this process forks: the
   child runs the script as `python3 script.py` would (a fresh `__main__`, under coverage.py with
   branch measurement when asked), its stdout/stderr being the exec's; this process, the
   supervisor, keeps the script's source in its own memory and waits;
3. the supervisor enforces the run's time limit itself (a script whose worker died does not run
   forever), then kills every process of the scripts' uid (what the script left running), and
   only then writes `.repost-result.json`: coverage computed from the arcs the child sent through
   a pipe and the source it kept, whether the child timed out, and the module a
   ModuleNotFoundError named. No process of the script exists any more when the result is
   written, so a result file the script wrote itself is replaced, never read; a script that
   calls `os._exit` still sends its arcs first. The exit status is the script's; TIMEOUT_EXIT
   with `timedOut` in the result means the supervisor's time limit ended it.

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


def _run_as_main(script_path):
    """What `python3 script.py` does: a fresh `__main__` module, the compiled file executed in it."""
    with open(script_path, "rb") as fh:
        source = fh.read()
    main = type(sys)("__main__")
    main.__file__ = script_path
    main.__cached__ = None
    main.__loader__ = None
    main.__spec__ = None
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    exec(compile(source, script_path, "exec"), main.__dict__)


RESULT_NAME = ".repost-result.json"
TIMEOUT_EXIT = 124


class _Reporter:
    """The child's side of the pipe: sends the measured arcs (and a missing module) once."""

    def __init__(self, fd, cov, script_path):
        self.fd, self.cov, self.script_path = fd, cov, script_path
        self.pid = os.getpid()
        self.sent = False

    def send(self, missing_module=None):
        if self.sent or os.getpid() != self.pid:
            return
        self.sent = True
        message = {"missingModule": missing_module}
        if self.cov is not None:
            try:
                self.cov.stop()
                message["arcs"] = self.cov.get_data().arcs(self.script_path) or []
            except Exception as exc:  # noqa: BLE001 - the script may have broken coverage itself
                message["note"] = f"coverage could not be collected: {type(exc).__name__}: {exc}"
        import json

        data = (json.dumps(message) + "\n").encode()
        try:
            while data:
                data = data[os.write(self.fd, data):]
        except OSError:
            pass

    def exit_hook(self, real_exit):
        def _exit(code):
            self.send()
            real_exit(code)

        return _exit


def _child(request, run_dir, script_path, target, fd):
    """Runs the script in this (forked) process; never returns."""
    try:
        cache_dir = os.path.join(run_dir, "cache")
        os.chdir(run_dir)
        os.environ["CACHE_DIR"] = cache_dir
        os.environ["TMPDIR"] = "/tmp"
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
        os.environ["PYTHONUNBUFFERED"] = "1"
        sys.dont_write_bytecode = True
        # Packages: the run's environment from the store, then any baked into a dataset image.
        package_dirs = [d for d in (request.get("packageDir"), BAKED_PACKAGES) if d and os.path.isdir(d) and os.listdir(d)]
        # sys.path as `python3 script.py` has it: the script's folder first, never the harness's.
        sys.path[:] = [run_dir] + [p for p in sys.path if p != HARNESS_DIR]
        if package_dirs:
            import site

            os.environ["PYTHONPATH"] = os.pathsep.join(package_dirs)
            for d in package_dirs:
                site.addsitedir(d)  # also honours .pth files, which PYTHONPATH alone would not
        else:
            os.environ.pop("PYTHONPATH", None)
        sys.argv = [script_path]

        cov = None
        if target:
            import coverage

            cov = coverage.Coverage(branch=True, data_file=None, include=[script_path], config_file=False)
        reporter = _Reporter(fd, cov, script_path)
        # A script that ends its process without the interpreter's shutdown still reports first.
        import posix

        os._exit = posix._exit = reporter.exit_hook(posix._exit)
        if cov is not None:
            cov.start()
    except BaseException as exc:  # noqa: BLE001 - the harness itself failed: say so, end the child
        print(f"[repost-sandbox] harness failed before the script: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.stderr.flush()
        os._exit(1)

    status, missing = 0, None
    try:
        _run_as_main(script_path)
    except SystemExit as exc:
        status = _exit_code_of(exc)
    except BaseException as exc:  # noqa: BLE001 - everything uncaught is the script's failure
        status = 1
        if isinstance(exc, ModuleNotFoundError) and isinstance(exc.name, str):
            missing = exc.name
        _print_uncaught(exc, script_path)
    reporter.send(missing)
    # Like the interpreter's own shutdown: atexit handlers and non-daemon threads still run.
    sys.exit(status)


def _supervise(pid, fd, timeout):
    """Waits for the child (up to `timeout` seconds) reading what it sends; returns (wait status, timed out, bytes)."""
    import select
    import time

    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None  # old kernels: poll the child instead
    chunks, reading, timed_out, status = [], True, False, None
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
        chunks.append(chunk)
    return status, timed_out, b"".join(chunks)


def _last_message(data):
    import json

    for line in reversed(data.decode("utf-8", "replace").splitlines()):
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            return message
    return None


def _fresh_dir(path):
    """`path` as a real directory of this uid (the script may have replaced it with a link or a file)."""
    if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
        os.unlink(path)
    os.makedirs(path, mode=0o700, exist_ok=True)


def _write_result(run_dir, script_path, source, target, message, timed_out):
    """Coverage of the target span from the child's arcs and the source this process kept."""
    import json

    result = {"notes": [], "coverage": None, "timedOut": timed_out, "missingModule": None}
    if message is not None and isinstance(message.get("missingModule"), str):
        result["missingModule"] = message["missingModule"]
    try:
        _fresh_dir(run_dir)
    except OSError as exc:
        result["notes"].append(f"the run directory could not be restored: {exc}")
    if target:
        if message is None or not isinstance(message.get("arcs"), list):
            result["notes"].append(
                (message or {}).get("note") or "the script ended its process before its coverage could be sent (killed by a signal or by its own doing)"
            )
        else:
            try:
                sys.path.insert(0, HARNESS_DIR)
                from repost_coverage_span import span_report
                import coverage

                if os.path.lexists(script_path):
                    os.unlink(script_path)
                _write(script_path, source)
                cov = coverage.Coverage(branch=True, data_file=None, include=[script_path], config_file=False)
                cov.get_data().add_arcs({script_path: [tuple(a) for a in message["arcs"] if isinstance(a, list) and len(a) == 2]})
                result["coverage"] = span_report(cov, script_path, target)
            except LookupError as exc:
                result["notes"].append(str(exc))
            except Exception as exc:  # noqa: BLE001
                result["notes"].append(f"coverage could not be measured: {type(exc).__name__}: {exc}")
    path = os.path.join(run_dir, RESULT_NAME)
    try:
        if os.path.lexists(path):
            os.unlink(path) if not os.path.isdir(path) or os.path.islink(path) else hygiene._remove_tree(path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(result, fh)
    except OSError:
        pass  # the caller notes the missing result



def main():
    request = _read_request(sys.argv[1:])
    reasons = hygiene.make_clean()
    if reasons:
        print(DIRTY_MARKER, "; ".join(reasons), file=sys.stderr)
        sys.stderr.flush()
        os._exit(DIRTY_EXIT)
    # The script sees an empty stdin, like a non-interactive run.
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(0, "r", closefd=False)

    run_dir = request["runDir"]
    os.makedirs(run_dir, mode=0o700)
    os.makedirs(os.path.join(run_dir, "cache"))
    # RepoST's records write to /home/user/tmp (a tmpfs in the sandbox); make it as they expect.
    if os.path.isdir("/home/user") and os.access("/home/user", os.W_OK):
        os.makedirs("/home/user/tmp", exist_ok=True)
    for name, text in (request.get("files") or {}).items():
        _write(_safe_join(run_dir, name), text)
    script_path = _safe_join(run_dir, request.get("scriptName") or "eval_script.py")
    source = request["script"]
    _write(script_path, source)
    target = (request.get("coverage") or {}).get("functionName")
    timeout = float(request.get("timeoutSec") or 0)

    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(request, run_dir, script_path, target, write_fd)
    os.close(write_fd)
    status, timed_out, data = _supervise(pid, read_fd, timeout)
    _write_result(run_dir, script_path, source, target, _last_message(data), timed_out)
    if timed_out:
        print(f"[repost-sandbox] the run exceeded its {timeout:g}s time limit and was killed", file=sys.stderr)
        sys.stderr.flush()
        os._exit(TIMEOUT_EXIT)
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
