"""Runs one script inside a sandbox container, in a fresh run directory.

Started as `python3 -I launch.py <fields>` where the request travels as command-line arguments
(`name count part...`, a value being its parts joined; `file:<path>` for extra files), or as
`launch.py -` with the request as JSON on stdin when it is too large or holds NUL characters.
`-I` keeps anything an earlier run left (a user site directory, PYTHON* variables) from running
before the container is cleaned. Then:

1. the container is made clean: leftover processes of the scripts' uid killed, the writable
   mounts emptied, OOM history checked; if that fails it exits with DIRTY_EXIT and the caller
   retries on a fresh container;
2. the script and its files are written into a fresh run directory and the script is executed
   in this very process, as `python3 script.py` would run it (one interpreter start per run;
   coverage.py measures the same way under `coverage run`), its stdout/stderr being the exec's;
3. afterwards every other process of the scripts' uid is killed (what the script left running),
   coverage of the target span is written to `.repost-result.json` in the run directory, and
   the exit status is the script's.

Imports are kept to what the interpreter has loaded anyway: this file's start-up cost is part of
every run's overhead. Everything else is imported only when needed.
"""
import atexit
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


def _write_result(cov, script_path, target, result_path):
    """Coverage of the target span into the run directory; never changes the run's status."""
    import json

    sys.path.insert(0, HARNESS_DIR)
    from repost_coverage_span import span_report

    result = {"notes": [], "coverage": None}
    try:
        result["coverage"] = span_report(cov, script_path, target)
    except LookupError as exc:
        result["notes"].append(str(exc))
    except Exception as exc:  # noqa: BLE001 - e.g. the script deleted or rewrote its own file
        result["notes"].append(f"coverage could not be measured: {type(exc).__name__}: {exc}")
    try:
        with open(result_path, "w", encoding="utf-8") as fh:
            json.dump(result, fh)
    except OSError:
        pass  # the script removed its run directory; the caller notes the missing result


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
    cache_dir = os.path.join(run_dir, "cache")
    os.makedirs(cache_dir)
    # RepoST's records write to /home/user/tmp (a tmpfs in the sandbox); make it as they expect.
    if os.path.isdir("/home/user") and os.access("/home/user", os.W_OK):
        os.makedirs("/home/user/tmp", exist_ok=True)
    for name, text in (request.get("files") or {}).items():
        _write(_safe_join(run_dir, name), text)
    script_path = _safe_join(run_dir, request.get("scriptName") or "eval_script.py")
    _write(script_path, request["script"])
    result_path = os.path.join(run_dir, ".repost-result.json")

    os.chdir(run_dir)
    os.environ["CACHE_DIR"] = cache_dir
    os.environ["TMPDIR"] = "/tmp"
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    os.environ["PYTHONUNBUFFERED"] = "1"
    sys.dont_write_bytecode = True
    # Packages: the run's cached requirement set, then any baked into a dataset image.
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
    # Registered first, so it runs last: after the script's own atexit handlers, whatever the
    # script left running (children, daemons) dies now rather than when the next run starts.
    atexit.register(hygiene.kill_others)

    target = (request.get("coverage") or {}).get("functionName")
    cov = None
    if target:
        import coverage

        cov = coverage.Coverage(branch=True, data_file=None, include=[script_path], config_file=False)
        cov.start()

    status = 0
    try:
        _run_as_main(script_path)
    except SystemExit as exc:
        status = _exit_code_of(exc)
    except BaseException as exc:  # noqa: BLE001 - everything uncaught is the script's failure
        status = 1
        _print_uncaught(exc, script_path)
    finally:
        if cov is not None:
            cov.stop()

    if cov is not None:
        _write_result(cov, script_path, target, result_path)
    # Like the interpreter's own shutdown: atexit handlers and non-daemon threads still run.
    sys.exit(status)


if __name__ == "__main__":
    main()
