"""Coverage of one function's line span, from coverage.py's own analysis.

Branch coverage here is arc coverage restricted to branch points: for every line of the span with
more than one possible successor (an `if`, a loop head, a `try`...), each possible arc counts once,
and the rate is taken arcs / possible arcs, exactly as coverage.py counts branches. A function
without branch points says so (`hasBranches: false`) instead of claiming 100%.
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


def _exit_text(to_line):
    return "exit" if to_line < 0 else str(to_line)


def _pct(num, den):
    return f"{100.0 * num / den:.0f}%" if den else "n/a"


def span_report(cov, script_path, function_name):
    with open(script_path, encoding="utf-8") as fh:
        source = fh.read()
    node = find_function(ast.parse(source), function_name)
    if node is None:
        raise LookupError(f"coverage target {function_name!r} is not defined in the script")
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    end = node.end_lineno
    in_span = lambda line: start <= line <= end  # noqa: E731

    analysis = cov._analyze(script_path)
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
    rate = branch_rate if has_branches else line_rate

    summary = [f"Coverage of {function_name} (lines {start}-{end}):"]
    if has_branches:
        summary.append(
            f"branch coverage {len(taken_branch_arcs)}/{len(branch_arcs)} arcs taken ({_pct(len(taken_branch_arcs), len(branch_arcs))}),"
        )
    else:
        summary.append("no branches (nothing to measure as branch coverage),")
    summary.append(f"line coverage {lines_covered}/{lines_total} ({_pct(lines_covered, lines_total)}).")
    if missing_lines:
        summary.append("Lines never executed: " + ", ".join(map(str, missing_lines)) + ".")
    if missing_branches:
        summary.append(
            "Branches never taken (from line -> to line): " + ", ".join(m["text"] for m in missing_branches) + "."
        )
    return {
        "target": function_name,
        "startLine": start,
        "endLine": end,
        "hasBranches": has_branches,
        "rate": rate,
        "lines": {"total": lines_total, "covered": lines_covered, "rate": line_rate},
        "branches": {"total": len(branch_arcs), "taken": len(taken_branch_arcs), "rate": branch_rate},
        "arcs": {
            "total": len(possible_arcs),
            "taken": sum(1 for a in possible_arcs if a in executed_arcs),
        },
        "missingLines": missing_lines,
        "missingBranches": missing_branches,
        "summary": " ".join(summary),
    }
