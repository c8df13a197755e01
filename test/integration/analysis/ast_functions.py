"""Reference walk with Python's own `ast`: every module-level function and every method of
every class (nested classes included), never functions nested in functions.

Usage: python3 ast_functions.py <root> [ignored-dir ...]  -> JSON on stdout:
{"functions": [[path, qualname, kind, start, end], ...], "skipped": [path, ...]}
Symlinks are followed only when they stay inside the root, like the analyser does.
"""
import ast
import json
import os
import sys


def walk(root, ignore):
    real_root = os.path.realpath(root)
    functions, skipped = [], []
    for dirpath, dirnames, filenames in os.walk(real_root):
        dirnames[:] = sorted(d for d in dirnames if d not in ignore and not d.endswith(".egg-info") and not os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, real_root).replace(os.sep, "/")
            if os.path.islink(full):
                target = os.path.realpath(full)
                if not os.path.exists(target) or os.path.commonpath([real_root, target]) != real_root:
                    skipped.append(rel)
                    continue
            with open(full, "rb") as fh:
                data = fh.read()
            try:
                tree = ast.parse(data, filename=rel)
            except (SyntaxError, ValueError, UnicodeDecodeError):
                skipped.append(rel)
                continue
            visit(tree, rel, [], functions)
    return {"functions": functions, "skipped": skipped}


def visit(node, path, classes, out):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([child.lineno] + [d.lineno for d in child.decorator_list])
            kind = "method" if classes else "function"
            out.append([path, ".".join(classes + [child.name]), kind, start, child.end_lineno])
        elif isinstance(child, ast.ClassDef):
            visit(child, path, classes + [child.name], out)
        else:
            visit(child, path, classes, out)


if __name__ == "__main__":
    print(json.dumps(walk(sys.argv[1], set(sys.argv[2:]))))
