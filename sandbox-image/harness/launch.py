"""Runs one script inside a sandbox container, in a fresh run directory.

Started as `python3 -I launch.py <request JSON in chunks>` (or `-` to read it from stdin when it is
too large for the command line). `-I` keeps anything an earlier run left (a user site directory,
PYTHON* variables) from running before the container is cleaned. Then:

1. the container is made clean: leftover processes of the scripts' uid killed, the writable
   mounts emptied, OOM history checked; if that fails it exits with DIRTY_EXIT and the caller
   retries on a fresh container;
2. the script and its files are written into a fresh run directory and the script is executed
   in this very process with `runpy` (one interpreter start per run; coverage.py measures the
   same way under `coverage run`), its stdout/stderr being the exec's own streams;
3. afterwards every other process of the scripts' uid is killed (what the script left running),
   coverage of the target span is written to `.repost-result.json` in the run directory, and
   the exit status is the script's, as `python3 script.py` would give it.
"""
import atexit
import json
import os
import runpy
import site
import sys
import traceback

HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HARNESS_DIR)
import repost_hygiene as hygiene  # noqa: E402  (prefixed: a script may have its own `hygiene`)

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
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != script_path:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb, file=sys.stderr)


def _read_request():
    if sys.argv[1:] == ["-"]:
        return json.loads(sys.stdin.buffer.read().decode("utf-8"))
    return json.loads("".join(sys.argv[1:]))


def main():
    request = _read_request()
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
    package_dir = request.get("packageDir")
    # sys.path as `python3 script.py` has it: the script's folder first, never the harness's.
    sys.path[:] = [run_dir] + [p for p in sys.path if p != HARNESS_DIR]
    if package_dir:
        os.environ["PYTHONPATH"] = package_dir
        site.addsitedir(package_dir)  # also honours .pth files, which PYTHONPATH alone would not
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
        runpy.run_path(script_path, run_name="__main__")
    except SystemExit as exc:
        status = _exit_code_of(exc)
    except BaseException as exc:  # noqa: BLE001 - everything uncaught is the script's failure
        status = 1
        _print_uncaught(exc, script_path)
    finally:
        if cov is not None:
            cov.stop()

    result = {"notes": []}
    if cov is not None:
        sys.path.insert(0, HARNESS_DIR)
        from repost_coverage_span import span_report

        try:
            result["coverage"] = span_report(cov, script_path, target)
        except LookupError as exc:
            result["coverage"] = None
            result["notes"].append(str(exc))
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    # Like the interpreter's own shutdown: atexit handlers and non-daemon threads still run.
    sys.exit(status)


if __name__ == "__main__":
    main()
