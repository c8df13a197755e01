"""Coverage of one function's line span, or of a class's methods, from coverage.py's own analysis.

Branch coverage here is arc coverage restricted to branch points: for every line of the span with
more than one possible successor (an `if`, a loop head, a `try`...), each possible arc counts once,
and the rate is taken arcs / possible arcs, exactly as coverage.py counts branches. A function
without branch points says so (`hasBranches: false`) instead of claiming 100%.

A class target (`Name` or `Outer.Inner` naming a class, when no function has that name) is
measured over the spans of all its methods (those of nested classes included): overall, and per
method in `methods`. The class body's own statements (attributes, the `def` lines themselves) run
when the class is created whatever the tests do, so they are not counted.
"""
import ast


def find_function(tree, qualified_name):
    """Finds `name`, `Class.name` or `Outer.Inner.name`; a bare name may also be a method."""
    parts = qualified_name.split(".")

    def same_scope(body):
        # A definition under `if`, `with`, `try`, `for` or `while` belongs to the enclosing scope.
        for node in body:
            yield node
            if isinstance(node, (ast.If, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While, ast.Try, getattr(ast, "TryStar", ast.Try))):
                inner = list(node.body) + list(getattr(node, "orelse", [])) + list(getattr(node, "finalbody", []))
                for handler in getattr(node, "handlers", []):
                    inner.extend(handler.body)
                yield from same_scope(inner)

    def walk(body, path):
        for node in same_scope(body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                here = path + [node.name]
                if here == parts and not isinstance(node, ast.ClassDef):
                    return node
                if isinstance(node, ast.ClassDef) or len(parts) > len(here):
                    found = walk(node.body, here)
                    if found is not None:
                        return found
        return None

    found = walk(tree.body, [])
    if found is None and len(parts) == 1:
        matches = [
            n for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == parts[0]
        ]
        found = matches[0] if matches else None
    return found


def find_class(tree, qualified_name):
    """Finds the class `Name` or `Outer.Inner`."""
    parts = qualified_name.split(".")
    body, found = tree.body, None
    for part in parts:
        found = None
        for node in body:
            if isinstance(node, ast.ClassDef) and node.name == part:
                found = node
        if found is None:
            return None
        body = found.body
    return found


def class_methods(node, prefix=""):
    """The methods of a class and of the classes nested in it: (qualified name in the class, node)."""
    out = []
    for child in node.body:
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((prefix + child.name, child))
        elif isinstance(child, ast.ClassDef):
            out.extend(class_methods(child, prefix + child.name + "."))
    return out


def _span_of(node):
    return min([node.lineno] + [d.lineno for d in node.decorator_list]), node.end_lineno


def _exit_text(to_line):
    return "exit" if to_line < 0 else str(to_line)


def _pct(num, den):
    return f"{100.0 * num / den:.0f}%" if den else "n/a"


def _measure(analysis, in_span):
    """Lines and branch arcs of the lines `in_span` selects."""
    statements = sorted(l for l in analysis.statements if in_span(l))
    missing_lines = sorted(l for l in analysis.missing if in_span(l))
    executed_arcs = set(analysis.arcs_executed)
    possible_arcs = [a for a in analysis.arc_possibilities if a[0] > 0 and in_span(a[0])]
    branch_lines = sorted(l for l in analysis._branch_lines() if in_span(l))
    branch_arcs = [a for a in possible_arcs if a[0] in branch_lines]
    taken_branch_arcs = [a for a in branch_arcs if a in executed_arcs]
    missing_branches = [
        {"from": a, "to": (b if b > 0 else None), "text": f"{a}->{_exit_text(b)}"}
        for (a, b) in branch_arcs
        if (a, b) not in executed_arcs
    ]
    lines_total = len(statements)
    lines_covered = lines_total - len(missing_lines)
    has_branches = bool(branch_arcs)
    branch_rate = (len(taken_branch_arcs) / len(branch_arcs)) if has_branches else None
    line_rate = (lines_covered / lines_total) if lines_total else 1.0
    return {
        "hasBranches": has_branches,
        "rate": branch_rate if has_branches else line_rate,
        "lines": {"total": lines_total, "covered": lines_covered, "rate": line_rate},
        "branches": {"total": len(branch_arcs), "taken": len(taken_branch_arcs), "rate": branch_rate},
        "arcs": {
            "total": len(possible_arcs),
            "taken": sum(1 for a in possible_arcs if a in executed_arcs),
        },
        "missingLines": missing_lines,
        "missingBranches": missing_branches,
    }


def _summary_parts(m):
    parts = []
    if m["hasBranches"]:
        b = m["branches"]
        parts.append(f"branch coverage {b['taken']}/{b['total']} arcs taken ({_pct(b['taken'], b['total'])}),")
    else:
        parts.append("no branches (nothing to measure as branch coverage),")
    l = m["lines"]
    parts.append(f"line coverage {l['covered']}/{l['total']} ({_pct(l['covered'], l['total'])}).")
    if m["missingLines"]:
        parts.append("Lines never executed: " + ", ".join(map(str, m["missingLines"])) + ".")
    if m["missingBranches"]:
        parts.append("Branches never taken (from line -> to line): " + ", ".join(x["text"] for x in m["missingBranches"]) + ".")
    return parts


def span_report(cov, script_path, function_name):
    with open(script_path, encoding="utf-8") as fh:
        source = fh.read()
    tree = ast.parse(source)
    node = find_function(tree, function_name)
    cls = find_class(tree, function_name) if node is None else None
    if node is None and cls is None:
        raise LookupError(f"coverage target {function_name!r} is not defined in the script")
    analysis = cov._analyze(script_path)
    if cls is not None:
        return _class_report(analysis, cls, function_name)
    start, end = _span_of(node)
    m = _measure(analysis, lambda line: start <= line <= end)
    summary = [f"Coverage of {function_name} (lines {start}-{end}):"] + _summary_parts(m)
    return {"target": function_name, "startLine": start, "endLine": end, **m, "summary": " ".join(summary)}


def _class_report(analysis, cls, class_name):
    start, end = _span_of(cls)
    methods = [(name, _span_of(n)) for name, n in class_methods(cls)]
    in_methods = lambda line: any(a <= line <= b for _, (a, b) in methods)  # noqa: E731
    overall = _measure(analysis, in_methods)
    per_method = []
    for name, (a, b) in methods:
        m = _measure(analysis, lambda line, a=a, b=b: a <= line <= b)
        per_method.append({
            "name": name,
            "startLine": a,
            "endLine": b,
            "hasBranches": m["hasBranches"],
            "rate": m["rate"],
            "lines": m["lines"],
            "branches": m["branches"],
        })
    summary = [f"Coverage of class {class_name} (lines {start}-{end}) over its {len(methods)} method(s):"] + _summary_parts(overall)
    if per_method:
        summary.append(
            "Per method: " + ", ".join(f"{p['name']} {_pct(round(p['rate'] * 1000), 1000)}" for p in per_method) + "."
        )
    return {"target": class_name, "startLine": start, "endLine": end, **overall, "methods": per_method, "summary": " ".join(summary)}
