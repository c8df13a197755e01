"""Cyclomatic complexity of every method of every class, as radon computes it.

Reads {"root": DIR, "paths": [...]} on stdin and prints one JSON object: for each file, the
methods of its classes (nested classes included, named Outer.Inner) with the line of their
`def` and radon's complexity. Files radon cannot parse are listed under "errors". Only parses
the files (radon uses Python's ast); nothing in them runs.
"""
import json
import os
import sys
import tokenize

from radon.complexity import cc_visit
from radon.visitors import Class


def methods_of(cls, prefix, out):
    name = f"{prefix}.{cls.name}" if prefix else cls.name
    for m in cls.methods:
        out.append({"class": name, "method": m.name, "line": m.lineno, "complexity": m.complexity})
    for inner in cls.inner_classes:
        methods_of(inner, name, out)


def main():
    request = json.load(sys.stdin)
    result = {"methods": {}, "errors": {}}
    for rel in request["paths"]:
        # As Python reads source: its coding declaration or UTF-8, a BOM dropped.
        with tokenize.open(os.path.join(request["root"], rel)) as f:
            source = f.read()
        try:
            blocks = cc_visit(source)
        except SyntaxError as err:
            result["errors"][rel] = str(err)
            continue
        out = []
        for block in blocks:
            if isinstance(block, Class):
                methods_of(block, "", out)
        result["methods"][rel] = out
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
