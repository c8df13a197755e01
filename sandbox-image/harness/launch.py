"""Runs one script inside a sandbox container, in a fresh run directory.

Reads a JSON request on stdin (so scripts of any size pass through `docker exec`), writes the
script and its files into the run directory, then executes the script in this very process with
`runpy` (one interpreter start per run; coverage.py measures the same way under `coverage run`).
The script's stdout/stderr are the exec's own streams, so the caller bounds and parses them.
A structured result (coverage of the target span, harness notes) goes to `result.json` in the
run directory; the exit status is the script's, as `python3 script.py` would give it.
"""
import json
import os
import runpy
import site
import sys
import traceback

HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))


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


def main():
    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
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
    os.environ["TMPDIR"] = os.environ.get("TMPDIR") or "/tmp"
    package_dir = request.get("packageDir")
    # sys.path as `python3 script.py` has it: the script's folder first, never the harness's.
    sys.path[:] = [run_dir] + [p for p in sys.path[1:] if p != HARNESS_DIR]
    if package_dir:
        os.environ["PYTHONPATH"] = package_dir
        site.addsitedir(package_dir)  # also honours .pth files, which PYTHONPATH alone would not
    sys.argv = [script_path]

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
        from coverage_span import span_report

        try:
            result["coverage"] = span_report(cov, script_path, target)
        except LookupError as exc:
            result["coverage"] = None
            result["notes"].append(str(exc))
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - a closed stream must not hide the status
        pass
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    # Like the interpreter's own shutdown: atexit handlers and non-daemon threads still run.
    sys.exit(status)


if __name__ == "__main__":
    main()
