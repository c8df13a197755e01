"""AST equivalence of two function (or class) sources, with Python's own `ast`.

Reads {"a": source, "b": source} as JSON (the arguments joined, or stdin when the only argument is `-`), prints {"equivalent": bool, "difference": str|null}.
Docstrings and comments are ignored (comments never reach the AST; docstrings are dropped from
every function and class body); decorators, the signature (parameters, defaults, annotations,
return annotation) and the body are compared. The first difference is reported with the line
numbers on both sides so it can be quoted back.
"""
import ast
import json
import sys
import textwrap


def _strip_docstrings(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    return tree


def _function(source, label):
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError as exc:
        raise ValueError(f"{label} does not parse: {exc.msg} (line {exc.lineno})") from None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return _strip_docstrings(node)
    raise ValueError(f"{label} defines no function or class at its top level")


def _describe(node):
    if isinstance(node, ast.AST):
        try:
            text = ast.unparse(node).replace("\n", "; ")
        except Exception:  # noqa: BLE001 - some fragments (e.g. a bare `arguments`) do not unparse
            text = ""
        return f"{type(node).__name__} `{text[:80]}`"
    return repr(node)


def _line(node, fallback):
    return getattr(node, "lineno", None) or fallback


def _compare(a, b, path, line_a, line_b):
    """Returns the first difference as text, or None."""
    if type(a) is not type(b):
        return f"{path}: {_describe(a)} (a, line {line_a}) vs {_describe(b)} (b, line {line_b})"
    if isinstance(a, ast.AST):
        line_a, line_b = _line(a, line_a), _line(b, line_b)
        for field in a._fields:
            if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef)) and field == "type_comment":
                continue
            diff = _compare(getattr(a, field, None), getattr(b, field, None), f"{path}.{field}", line_a, line_b)
            if diff:
                return diff
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            diff = _compare(x, y, f"{path}[{i}]", line_a, line_b)
            if diff:
                return diff
        if len(a) != len(b):
            extra, side = (a[len(b)], "a") if len(a) > len(b) else (b[len(a)], "b")
            return f"{path}: {len(a)} vs {len(b)} entries; first extra in {side}: {_describe(extra)}"
        return None
    if a != b:
        return f"{path}: {a!r} (a, line {line_a}) vs {b!r} (b, line {line_b})"
    return None


def compare_functions(source_a, source_b):
    fa, fb = _function(source_a, "a"), _function(source_b, "b")
    diff = _compare(fa, fb, "class" if isinstance(fa, ast.ClassDef) else "function", fa.lineno, fb.lineno)
    return {"equivalent": diff is None, "difference": diff}


def handle(request):
    """{"a": source, "b": source} -> {"equivalent", "difference"} (launch.py's helper entry)."""
    try:
        return compare_functions(request["a"], request["b"])
    except ValueError as exc:
        return {"equivalent": False, "difference": str(exc)}


def main():
    raw = sys.stdin.buffer.read().decode("utf-8") if sys.argv[1:] == ["-"] else "".join(sys.argv[1:])
    print(json.dumps(handle(json.loads(raw))))


if __name__ == "__main__":
    main()
