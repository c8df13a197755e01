"""The verifier of an exported Harbor task (tests/verify.py in every task folder).

Runs in the task's verifier container (Harbor's `separate` mode: a fresh container of the task's
image, never the agent's), started by tests/test.sh as root. It reads the agent's answer
(/app/solution.py, brought over by Harbor as the task's artifact), places the definition of the
target where the exporter marked it (tests/task.json): in an isolated run, as eval.ts runs answers,
under its own name in the candidate's module, which runs in a process of its own while the
script's `<name>_new_implementation` is a stub calling it there; runs the script through the
sandbox harness (`launch.py` in the image: ONE entry, `run_candidate` below), and writes
/logs/verifier/reward.txt (1 or 0), reward.json (Harbor reads numbers only: the reward, the
duration and a 0/1 per failure kind) and verdict.json (passed, the failure kind as eval.ts names
them, the exception type, a one-line summary, the duration, the tests that ran).

Two ways of scoring, as task.json's `scoring` says: `script` (a function record) runs the whole
evaluation script once, as eval.ts scores a sample; `per-test` (a class environment) runs each of
the script's test functions on its own through the harness's test runner, as `eval.ts --classes`
does: the reward is 1 only when every test passes (a class counts for Pass@k so), and reward.json
adds the fraction passed, a 0/1 per test and each test's duration in seconds (as the harness's
test runner measured it).

Only Python's standard library is used: this file runs under the image's python3.
"""
import ast
import json
import os
import re
import sys
import textwrap
import time

TASK_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "task.json")
ANSWER = os.environ.get("REPOST_ANSWER_FILE", "/app/solution.py")
LOG_DIR = os.environ.get("REPOST_VERIFIER_LOG_DIR", "/logs/verifier")
HARNESS = "/opt/repost/harness/launch.py"
RESULT_DIR = "/run/repost"
MAX_ANSWER_BYTES = 256 * 1024
SLOT = "#@@REPOST_ANSWER_SLOT@@"
SUFFIX = "_new_implementation"
SYNTAX_ERRORS = {"SyntaxError", "IndentationError", "TabError"}


KINDS = ("no_code", "syntax_error", "assertion", "exception", "timeout", "candidate_exit", "forbidden_value", "protocol", "wrong_type", "harness")


def write_verdict(verdict, per_test=False):
    """reward.txt (1 or 0); reward.json, Harbor's numbers only (the reward, the duration, one 0/1
    per failure kind, so a job's means are the rates of each; scored per test, the fraction of
    tests passed and one 0/1 per test too); verdict.json, the whole verdict."""
    os.makedirs(LOG_DIR, exist_ok=True)
    with open(os.path.join(LOG_DIR, "reward.txt"), "w") as fh:
        fh.write("1\n" if verdict["passed"] else "0\n")
    numbers = {"reward": verdict["reward"], "duration_sec": verdict["duration"]}
    numbers.update({f"kind_{k}": int(verdict["kind"] == k) for k in KINDS})
    if per_test:
        tests = verdict["tests"]
        passed = sum(1 for t in tests if t["outcome"] == "passed")
        numbers.update({"tests_passed": passed, "tests_total": len(tests), "test_pass_rate": round(passed / len(tests), 4) if tests else 0})
        numbers.update({f"pass_{t['name']}": int(t["outcome"] == "passed") for t in tests})
        # Seconds each test took, as the harness's test runner measured it (none for a test that never ended).
        numbers.update({f"duration_{t['name']}": t["duration"] for t in tests if isinstance(t.get("duration"), (int, float))})
    with open(os.path.join(LOG_DIR, "reward.json"), "w") as fh:
        json.dump(numbers, fh)
        fh.write("\n")
    with open(os.path.join(LOG_DIR, "verdict.json"), "w") as fh:
        json.dump(verdict, fh, indent=2)
        fh.write("\n")


def outcome(passed, kind, summary, exception_type=None, duration=0.0, tests=None):
    return {
        "reward": 1 if passed else 0,
        "passed": passed,
        "kind": kind,
        "exceptionType": exception_type,
        "summary": summary[:300],
        "duration": round(duration, 3),
        "tests": tests or [],
    }


def _definition_nodes(tree, name, kind):
    """The target's definition in the answer: at the top level, else (a method) in any class."""
    wanted = (ast.ClassDef,) if kind == "class" else (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, wanted) and node.name == name:
            return node, None
    if kind != "class":
        for cls in tree.body:
            if isinstance(cls, ast.ClassDef):
                for node in cls.body:
                    if isinstance(node, wanted) and node.name == name:
                        return node, cls
    return None, None


def _segment(lines, node):
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return first, node.end_lineno


def _dedent(block):
    widths = [len(l) - len(l.lstrip()) for l in block if l.strip()]
    cut = min(widths) if widths else 0
    return [l[cut:] if l.strip() else "" for l in block]


def place(answer, task):
    """The answer's definition in its slot (the candidate's module in an isolated run, else the
    script as `<name>_new_implementation`), its imports and helpers on top.

    Returns ({"script", "candidate"}, None) or (None, outcome) when the answer cannot be placed."""
    name, kind, script = task["name"], task["kind"], task.get("script")
    answer = textwrap.dedent(answer.replace("\r\n", "\n"))
    try:
        tree = ast.parse(answer)
    except SyntaxError as exc:
        return None, outcome(False, "syntax_error", f"the answer does not parse: {exc.msg} (line {exc.lineno})", type(exc).__name__)
    node, owner = _definition_nodes(tree, name, kind)
    if node is None:
        what = "class" if kind == "class" else "function"
        return None, outcome(False, "no_code", f"{ANSWER} defines no {what} {name}")
    lines = answer.split("\n")
    first, last = _segment(lines, node)
    block = _dedent(lines[first - 1 : last])
    isolated = task.get("isolated")
    if not isolated:
        # Rename the definition (its `def name` / `class name` line), nothing else.
        row = node.lineno - first
        keyword = "class" if kind == "class" else "def"
        block[row] = re.sub(r"\b(" + keyword + r"\s+)" + re.escape(name) + r"\b", lambda m: m.group(1) + name + SUFFIX, block[row], count=1)
    # In an isolated run the answer keeps its name and goes into the candidate's module, which
    # runs in a process of its own; the script gets the stub.
    target = isolated["module"] if isolated else script
    indent = isolated["indent"] if isolated else task["indent"]
    at = isolated["preambleAt"] if isolated else task["preambleAt"]
    placed = "\n".join(indent + l if l else l for l in block)
    target_tree = ast.parse(target.replace(SLOT, "pass"))
    bound = set()
    for stmt in target_tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in stmt.names)
    # Imports and (for a top-level function) helper functions beside it go above; a name the script
    # defines stays the script's. A class brings its imports only, and none of the repository's own
    # modules (the script defines what they would bring), as eval.ts --classes places a class.
    local = set(task.get("localModules") or [])
    preamble = []
    for stmt in tree.body:
        if stmt is node or stmt is owner:
            continue
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            continue
        if kind == "class":
            if isinstance(stmt, ast.ImportFrom) and (stmt.level or (stmt.module or "").split(".")[0] in local):
                continue
            if isinstance(stmt, ast.Import) and any(a.name.split(".")[0] in local for a in stmt.names):
                continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or (kind != "class" and owner is None and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name not in bound):
            s, e = _segment(lines, stmt)
            preamble.append("\n".join(lines[s - 1 : e]))
    body = target[:at] + ("\n".join(preamble) + "\n\n" if preamble else "") + target[at:]
    body = body.replace(indent + SLOT, placed, 1)
    if isolated:
        return {"script": isolated["script"], "candidate": {"target": isolated["target"], "kind": isolated["kind"], "module": body}}, None
    return {"script": body, "candidate": None}, None


class _SupervisorExit(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


class _OsOfSupervisor:
    """launch.py's `os`, except that `_exit` in this process (the supervisor) returns here."""

    def __init__(self, real, pid):
        self._real, self._pid = real, pid

    def __getattr__(self, name):
        return getattr(self._real, name)

    def _exit(self, code):
        if self._real.getpid() == self._pid:
            raise _SupervisorExit(code)
        self._real._exit(code)


def run_candidate(placed, timeout_sec, runner=None):
    """The one harness entry: the script and, in an isolated run, the candidate's module (its own
    process, as eval.ts runs answers), run by launch.py; with `runner`, the harness's test runner
    runs its snippets against the script instead of running the script. Returns
    (exit status, stderr, the supervisor's result or None, seconds).

    launch.py's supervisor runs in this very process. When the script ends, the supervisor kills
    every other process in the container but PID 1, so it must be the process Harbor waits on
    (test.sh execs this file) for the verdict to be written afterwards."""
    import io

    request = {"runDir": "/scratch/run-verify", "script": placed["script"], "files": {}, "coverage": None, "packageDir": None, "runner": None, "timeoutSec": timeout_sec}
    if placed.get("candidate"):
        request["candidate"] = placed["candidate"]
    if runner is not None:
        request["runner"] = runner
    sys.path.insert(0, os.path.dirname(HARNESS))
    import launch

    launch.os = _OsOfSupervisor(os, os.getpid())
    log_fd = os.open(os.path.join(RESULT_DIR, "verify-output.log"), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    saved = os.dup(1), os.dup(2)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    sys.argv = [HARNESS, "-"]
    sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(request).encode()))
    os.environ.update({"HOME": "/scratch", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"})
    started = time.monotonic()
    code = None
    try:
        launch.main()
    except _SupervisorExit as done:
        code = done.code
    duration = time.monotonic() - started
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(saved[0], 1)
    os.dup2(saved[1], 2)
    os.lseek(log_fd, 0, 0)
    output = os.read(log_fd, 1 << 20).decode("utf-8", "replace")
    os.close(log_fd)
    result = None
    try:
        with open(os.path.join(RESULT_DIR, "run-verify.json")) as fh:
            result = json.load(fh)
    except (OSError, ValueError):
        pass
    return code, output, result, duration


def exception_of(stderr):
    """The exception the traceback on stderr ends with: (type, line) or (None, None)."""
    lines = [l for l in stderr.strip().split("\n") if l.strip()]
    for line in reversed(lines[-20:]):
        m = re.match(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$", line)
        if m and (m.group(1).endswith(("Error", "Exception", "Exit", "Interrupt")) or "." in m.group(1)):
            return m.group(1).split(".")[-1], line
    return None, None


def classify(code, stderr, result, duration, test_names):
    """As the factory's executor and eval.ts classify a run (activities/sandbox/executor.ts, eval/outcome.ts)."""
    exc_type, line = exception_of(stderr)
    last = (line or (stderr.strip().split("\n")[-1] if stderr.strip() else "")).strip()
    # One run of the script decides: its test functions are listed, not scored one by one.
    tests = [{"name": "eval_script", "testFunctions": list(test_names)}]
    candidate = (result or {}).get("candidate") if isinstance(result, dict) else None
    if result and result.get("timedOut"):
        kind, passed, summary = "timeout", False, "the run exceeded its time limit and was killed"
    elif isinstance(candidate, dict) and candidate.get("kind") in KINDS and code != 0 and not (candidate.get("kind") == "wrong_type" and exc_type):
        # The answer failed the run in a way of its own (isolated runs: see the harness README).
        kind, passed, summary, exc_type = candidate["kind"], False, str(candidate.get("detail", ""))[:300], None
    elif code == 0:
        kind, passed, summary, exc_type = None, True, "passed", None
    elif exc_type == "AssertionError" or re.search(r"^FAILED \(failures=\d+\)$", stderr, re.M):
        kind, passed, summary = "assertion", False, last or "a test assertion failed"
        exc_type = exc_type or "AssertionError"
    elif exc_type in SYNTAX_ERRORS:
        kind, passed, summary = "syntax_error", False, last
    elif code == 137 and not exc_type:
        kind, passed, summary, exc_type = "exception", False, "killed (out of memory?)", "MemoryError"
    else:
        kind, passed, summary = "exception", False, last or f"exit code {code}"
        exc_type = exc_type or f"exit {code}"
    for t in tests:
        t.update({"outcome": "passed" if passed else "failed", "kind": kind, "duration": round(duration, 3)})
    return outcome(passed, kind, summary, exc_type, duration, tests)


def test_kind(failure):
    """A failed test's kind from the exception type the runner reported."""
    if failure == "AssertionError":
        return "assertion"
    if failure in SYNTAX_ERRORS:
        return "syntax_error"
    if failure == "SnippetTimeout":
        return "timeout"
    return "exception"


def test_assertion(snippet, script):
    """A test's failed assertion as the harness's test runner reported it (where it stopped in the
    script, the message: the compared values) with its source line in `script`, or None."""
    a = snippet.get("assertion") if isinstance(snippet, dict) else None
    if not isinstance(a, dict) or not isinstance(a.get("line"), int):
        return None
    lines = script.split("\n")
    source = lines[a["line"] - 1].strip() if 0 < a["line"] <= len(lines) else ""
    return {"line": a["line"], "function": str(a.get("function", ""))[:200], "source": source[:300], "message": str(a.get("message", ""))[:500]}


def classify_tests(code, stderr, result, duration, test_names, script=""):
    """Scored per test (a class environment): each test's outcome from the runner's report, as
    eval.ts --classes reads it (activities/eval/test-runner.ts snippetResults); the run passes
    when every test passed. A failed run's kind: the time limit, else the answer's own failure in
    its process (an isolated run), else `assertion` when a failing test raised AssertionError, else
    the first failed test's. A test that failed on an assertion carries it (line, function, source
    line of `script`, the script that ran, and message), as eval.ts --classes names it."""
    report = (result or {}).get("runner") if isinstance(result, dict) else None
    snippets = (report or {}).get("snippets") or []
    load = (report or {}).get("loadFailure")
    tests = []
    for i, name in enumerate(test_names):
        s = snippets[i] if i < len(snippets) else None
        if load:
            failure = str(load)[:80]
        elif s is None:
            failure = "missing"
        elif s.get("status") in ("pass", "value"):
            failure = None
        else:
            failure = str(s.get("detail", ""))[:80] or "error"
        took = s.get("durationSec") if s is not None and not load else None
        test_duration = round(took, 6) if isinstance(took, (int, float)) and not isinstance(took, bool) else None
        tests.append({"name": name, "outcome": "passed" if failure is None else "failed", "kind": None if failure is None else ("exception" if failure == "missing" else test_kind(failure)), "exceptionType": failure, "duration": test_duration})
        assertion = test_assertion(s, script) if failure is not None and not load else None
        if assertion is not None:
            tests[-1]["assertion"] = assertion
    failed = [t for t in tests if t["outcome"] == "failed"]
    passed = bool(tests) and not failed and report is not None
    candidate = (result or {}).get("candidate") if isinstance(result, dict) else None
    if passed:
        return outcome(True, None, "passed", None, duration, tests)
    if result and result.get("timedOut"):
        kind, summary, exc_type = "timeout", "the run exceeded its time limit and was killed", None
    elif isinstance(candidate, dict) and candidate.get("kind") in KINDS and candidate.get("kind") != "wrong_type":
        kind, summary, exc_type = candidate["kind"], str(candidate.get("detail", ""))[:300], None
    elif report is None:
        exc_type, line = exception_of(stderr)
        kind, summary = "exception", (line or f"the test runner reported nothing (exit code {code})")
        exc_type = exc_type or f"exit {code}"
    else:
        # As eval.ts --classes names a class's run (class-eval.ts classRunOutcome): an assertion when a failing test raised one.
        first = next((t for t in failed if t["exceptionType"] == "AssertionError"), failed[0])
        kind, exc_type = first["kind"], first["exceptionType"]
        summary = f"{len(failed)} of {len(tests)} test(s) failed; {first['name']}: {exc_type}" + (" (the module did not load)" if load else "")
        a = first.get("assertion")
        if a:
            summary += f" at line {a['line']}: {a['source']}" + (f" ({a['message']})" if a["message"] else "")
    return outcome(False, kind, summary, exc_type, duration, tests)


def hold_callers_output():
    """Keeps the caller's stdout and stderr open until this process ends. The harness ends every
    other process in the container when the script ends, the shell that started test.sh too; the
    command that runs test.sh (Harbor's exec) waits for these streams, so it returns only once
    the verdict is written, not when its shell dies."""
    held = []
    for fd in (1, 2):
        try:
            held.append(os.open(f"/proc/{os.getppid()}/fd/{fd}", os.O_WRONLY))
        except OSError:
            pass
    return held


def main():
    _held = hold_callers_output()
    with open(TASK_FILE) as fh:
        task = json.load(fh)
    per_test = task.get("scoring") == "per-test"
    tests = task.get("tests", [])

    def failed(verdict):
        # Scored per test, an answer that never ran fails every test (eval.ts --classes: unrunnableSample).
        if per_test and not verdict["tests"]:
            verdict["tests"] = [{"name": t, "outcome": "failed", "kind": verdict["kind"], "exceptionType": "not_run", "duration": None} for t in tests]
        write_verdict(verdict, per_test)

    try:
        size = os.path.getsize(ANSWER)
    except OSError:
        failed(outcome(False, "no_code", f"no answer: {ANSWER} does not exist"))
        return
    if size > MAX_ANSWER_BYTES:
        failed(outcome(False, "no_code", f"the answer is larger than {MAX_ANSWER_BYTES} bytes"))
        return
    with open(ANSWER, "rb") as fh:
        answer = fh.read().decode("utf-8", "replace")
    if not answer.strip():
        failed(outcome(False, "no_code", f"the answer is empty ({ANSWER})"))
        return
    placed, failure = place(answer, task)
    if failure:
        failed(failure)
        return
    if per_test:
        # Each test function on its own, as the factory's test runner runs snippets (activities/eval/class-eval.ts testSnippet).
        runner = {"mode": "outputs", "target": task["name"], "snippets": [f"{t}()" for t in tests], "timeoutSec": float(task["timeoutSec"])}
        code, err, result, duration = run_candidate(placed, float(task["runTimeoutSec"]), runner)
    else:
        code, err, result, duration = run_candidate(placed, float(task["timeoutSec"]))
    if code is None:
        failed(outcome(False, "harness", "the harness ended without an exit status"))
        return
    if code == 199:
        failed(outcome(False, "harness", "the container was not clean: nothing was run"))
        return
    verdict = classify_tests(code, err, result, duration, tests, placed["script"]) if per_test else classify(code, err, result, duration, tests)
    sys.stderr.write(err[-4000:])
    write_verdict(verdict, per_test)


if __name__ == "__main__":
    main()
