"""Reference measures with Python's own `ast`, for the `repost` preset's tree-sitter reading.

For every module-level function and every method (as ast_functions.py lists them), what the
preset's rules read: statements of the body, the docstring, the body's own `return`s and those
returning a constant, the names and string constants met walking the definition (lower case),
and the code lines as `ast.unparse` writes the body's statements without the docstring.

Usage: python3 repost_measures.py <root> [ignored-dir ...]  -> JSON on stdout:
[[path, qualname, statements, docstring, directReturns, constantReturns, [words...], codeLines], ...]
"""
import ast
import json
import os
import sys


def measures(fn):
    body = fn.body
    doc = ast.get_docstring(fn, clean=False)
    returns = [s for s in body if isinstance(s, ast.Return)]
    constant = [r for r in returns if isinstance(r.value, ast.Constant)]
    words = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            words.add(node.id.lower())
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            words.add(node.value.lower())
    skip_first = doc is not None
    lines = sum(ast.unparse(s).count("\n") + 1 for i, s in enumerate(body) if not (i == 0 and skip_first))
    return [len(body), doc, len(returns), len(constant), sorted(words), lines]


def visit(node, path, classes, out):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append([path, ".".join(classes + [child.name])] + measures(child))
        elif isinstance(child, ast.ClassDef):
            visit(child, path, classes + [child.name], out)
        else:
            visit(child, path, classes, out)


def main():
    root = os.path.realpath(sys.argv[1])
    ignore = set(sys.argv[2:])
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ignore and not d.endswith(".egg-info") and not os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if not name.endswith(".py"):
                continue
            # A symlink counts when it stays inside the root, as the analyser has it.
            if os.path.islink(full):
                target = os.path.realpath(full)
                if not os.path.exists(target) or os.path.commonpath([root, target]) != root:
                    continue
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            try:
                with open(full, "rb") as fh:
                    tree = ast.parse(fh.read(), filename=rel)
            except (SyntaxError, ValueError, UnicodeDecodeError):
                continue
            visit(tree, rel, [], out)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
