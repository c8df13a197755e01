"""Runs many small test snippets against one evaluation script in a single run.

Started by launch.py in the script's child when the run request holds `runner`:

    {"mode": "matrix" | "outputs", "target": "name" | "Class.method", "snippets": [...], "timeoutSec": 10}

The evaluation script is imported under another name (so its `__main__` block does not run), then:

- matrix: `<name>_new_implementation` (the candidate) takes the place of `<name>`, then each
  snippet (a candidate test) runs in a fresh copy of the module's namespace; a snippet passes
  when it raises nothing: `pass`, or `fail` with the exception's type.
- outputs: nothing is replaced; each snippet's last statement is an expression whose `repr` is
  reported: `value` with the repr, or `error` with the exception's type.

Results go to the supervisor through the harness's report channel as each snippet ends (so what
finished is known even if a later snippet kills the process), never through the script's standard
streams or its files: nothing the candidate prints or writes is read as a result. The snippets'
and the module's own printing is discarded. Each snippet has its own time limit (SIGALRM).
Each result carries the snippet's duration in seconds, measured here with the monotonic clock
taken before the script is loaded (so a script replacing `time.monotonic` does not change it).
A snippet that failed on an AssertionError also carries where in the script it failed (the
innermost frame of the script: its line and function) and the assertion's message, cut to
MAX_MESSAGE characters; in an isolated run the script is compiled through the assert rewrite
(`rewrite`: repost_assert_values.py), so that message holds the values the assertion compared.
"""
import ast
import importlib.util
import io
import signal
import sys
import time

_monotonic = time.monotonic

MODULE_NAME = "repost_candidate_module"
MAX_REPR = 4000
MAX_MESSAGE = 500
MAX_NAME = 200


class SnippetTimeout(BaseException):
    """Raised by the alarm; a BaseException so `except Exception` in a snippet cannot swallow it."""


def _on_alarm(signum, frame):
    raise SnippetTimeout()


def _load(path, source=None, extra=None, rewrite=None):
    """The script as a module; with `source` (an isolated run) from memory, with `extra` globals,
    compiled after `rewrite` when given (a source that does not parse is compiled as it is)."""
    if source is None:
        spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[MODULE_NAME] = module
        spec.loader.exec_module(module)
        return module
    import linecache
    import types

    module = types.ModuleType(MODULE_NAME)
    module.__file__ = path
    module.__dict__.update(extra or {})
    sys.modules[MODULE_NAME] = module
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    tree = rewrite(source, path) if rewrite is not None else None
    exec(compile(tree if tree is not None else source, path, "exec"), module.__dict__)
    return module


def _assertion(exc, path):
    """Where a failed assertion stopped in the script at `path` (its innermost frame there) and
    its message, bounded; None for any other exception or when no frame is the script's."""
    if not isinstance(exc, AssertionError):
        return None
    where, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            where = tb
        tb = tb.tb_next
    if where is None:
        return None
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001 - a message that cannot be made is left out
        message = ""
    return {"line": where.tb_lineno, "function": str(where.tb_frame.f_code.co_name)[:MAX_NAME], "message": message[:MAX_MESSAGE]}


def _owner_of(module, target):
    owner = module
    for part in target.split(".")[:-1]:
        owner = getattr(owner, part)
    return owner


def _bind_candidate(module, target):
    """Puts `<name>_new_implementation` where `<name>` was (raw descriptors for class members)."""
    owner = _owner_of(module, target)
    name = target.split(".")[-1]
    new = name + "_new_implementation"
    value = owner.__dict__[new] if isinstance(owner, type) else getattr(owner, new)
    setattr(owner, name, value)


def _run_snippet(module, source, mode):
    namespace = dict(vars(module))
    tree = ast.parse(source, "<snippet>")
    if mode == "outputs":
        if not tree.body or not isinstance(tree.body[-1], ast.Expr):
            raise ValueError("the snippet does not end with an expression")
        last = tree.body.pop()
        exec(compile(tree, "<snippet>", "exec"), namespace)
        return eval(compile(ast.Expression(last.value), "<snippet>", "eval"), namespace)
    exec(compile(tree, "<snippet>", "exec"), namespace)
    return None


def run(script_path, request, reporter, source=None, extra=None, rewrite=None):
    """Runs every snippet of `request` against the script at `script_path` (or `source`), reporting each.
    In an isolated run the script's `<name>_new_implementation` is the stub calling the candidate's
    process, and the script is compiled after `rewrite` (the compared values in assertions' messages)."""
    mode, snippets = request["mode"], request["snippets"]
    timeout = max(1, int(request.get("timeoutSec", 10)))
    # The snippets' and the module's own output would only crowd the exec's streams.
    sys.stdout = io.StringIO()
    signal.signal(signal.SIGALRM, _on_alarm)
    try:
        signal.alarm(timeout * 3)
        module = _load(script_path, source, extra, rewrite)
        if mode == "matrix":
            _bind_candidate(module, request["target"])
        signal.alarm(0)
    except BaseException as exc:  # noqa: BLE001 - any failure to load fails every snippet
        signal.alarm(0)
        reporter.load_failed(type(exc).__name__)
        return
    for i, source in enumerate(snippets):
        sys.stdout = io.StringIO()
        started = _monotonic()
        try:
            signal.alarm(timeout)
            value = _run_snippet(module, source, mode)
            signal.alarm(0)
        except BaseException as exc:  # noqa: BLE001 - a failing snippet is a result, not an error
            signal.alarm(0)
            duration = _monotonic() - started
            reporter.snippet(i, "fail" if mode == "matrix" else "error", type(exc).__name__, duration, _assertion(exc, script_path))
            continue
        if mode == "matrix":
            reporter.snippet(i, "pass", "", _monotonic() - started)
        else:
            # The repr is the snippet's value: its time counts.
            text = repr(value)
            duration = _monotonic() - started
            if len(text) > MAX_REPR:
                reporter.snippet(i, "error", "ReprTooLong", duration)
            else:
                reporter.snippet(i, "value", text, duration)
