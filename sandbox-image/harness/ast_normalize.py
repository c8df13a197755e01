"""Normalised forms of Python sources, with Python's own `ast`: parse, then unparse.

Reads {"sources": [str, ...]} as JSON (the arguments joined, or stdin when the only argument is
`-`), prints {"results": [{"ok": true, "normalized": str} | {"ok": false, "error": str}, ...]}.
Formatting and comments disappear in the round trip, so two sources with the same normalised
form differ only in layout. Sources are dedented first (a method copied out of its class).
"""
import ast
import json
import sys
import textwrap


def normalize(source):
    try:
        return {"ok": True, "normalized": ast.unparse(ast.parse(textwrap.dedent(source)))}
    except SyntaxError as exc:
        return {"ok": False, "error": f"SyntaxError: {exc.msg} (line {exc.lineno})"}
    except (ValueError, RecursionError) as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def handle(request):
    """{"sources": [...]} -> {"results": [...]} (launch.py's helper entry)."""
    return {"results": [normalize(s) for s in request["sources"]]}


def main():
    raw = sys.stdin.buffer.read().decode("utf-8") if sys.argv[1:] == ["-"] else "".join(sys.argv[1:])
    print(json.dumps(handle(json.loads(raw))))


if __name__ == "__main__":
    main()
