"""Byte-compiles package sources for the image's Python, offline, without importing them.

Reads [[source, output], ...] as JSON from the file named by its argument (container paths); writes each source's `.pyc`
(timestamp-validated, as `python3 -m compileall` would) to its output path. A source that does
not compile (Python 2 files shipped in a wheel, templates named .py) is skipped: Python then
compiles it in memory at import, as it would have anyway. Prints how many were written.
"""
import json
import py_compile
import sys


def main():
    with open(sys.argv[1], encoding="utf-8") as fh:
        pairs = json.load(fh)
    written = 0
    for source, output in pairs:
        try:
            py_compile.compile(source, cfile=output, doraise=True)
            written += 1
        except (py_compile.PyCompileError, OSError, ValueError, SyntaxError):
            continue
    print(written)


if __name__ == "__main__":
    main()
