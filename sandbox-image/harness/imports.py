"""The imports of a script and its files, read with Python's `ast` (nothing is executed).

Reads {"sources": {"name.py": text, ...}} as JSON (the arguments joined, or stdin when the only
argument is `-`), prints {"imports": [...], "errors": [...]}. Every `import x` and
`from x import y` is found, at the top level and nested (functions, classes, branches), plus
`importlib.import_module("x")` and `__import__("x")` with a literal name. Each is reported once
per module name (`google.cloud.storage`; `module` is its top level) with where it was first seen
and how it is used:

- guarded: inside a `try` that catches ImportError / ModuleNotFoundError / Exception (or all):
  the script copes without it;
- typeChecking: under `if TYPE_CHECKING:`: never executed;
- dynamic: a literal name given to importlib / __import__.

Relative imports and the standard library of this interpreter (the sandbox's Python) are left
out, as are Python 2 standard modules (a Python 2 branch of a script must not install packages).
"""
import ast
import json
import sys

PY2_STDLIB = {
    "__builtin__", "anydbm", "BaseHTTPServer", "CGIHTTPServer", "ConfigParser", "Cookie", "cookielib",
    "copy_reg", "cPickle", "cStringIO", "commands", "dbhash", "dircache", "DocXMLRPCServer", "dummy_thread",
    "exceptions", "htmlentitydefs", "HTMLParser", "httplib", "md5", "mimetools", "Queue", "repr",
    "robotparser", "sets", "sha", "SimpleHTTPServer", "SimpleXMLRPCServer", "SocketServer", "StringIO",
    "thread", "Tkinter", "tkMessageBox", "tkFileDialog", "tkSimpleDialog", "ttk", "urllib2", "urlparse",
    "UserDict", "UserList", "UserString", "whichdb", "xmlrpclib", "new", "popen2", "string_escape",
}
NOT_PACKAGES = set(sys.stdlib_module_names) | PY2_STDLIB | {"__main__"}
CATCHES_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def _catches_import_errors(handler):
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    for t in types:
        name = t.attr if isinstance(t, ast.Attribute) else getattr(t, "id", None)
        if name in CATCHES_IMPORT_ERRORS:
            return True
    return False


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _literal_import_call(node):
    """`importlib.import_module("x")`, `import_module("x")`, `__import__("x")` with a literal."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in ("import_module", "__import__") or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and not first.value.startswith("."):
        return first.value
    return None


class _Scanner(ast.NodeVisitor):
    def __init__(self, file):
        self.file = file
        self.guarded = 0
        self.type_checking = 0
        self.found = []

    def _add(self, module, node, dynamic=False):
        top = module.split(".")[0]
        if not top or top in NOT_PACKAGES:
            return
        self.found.append({
            "module": top,
            "name": module,
            "file": self.file,
            "line": getattr(node, "lineno", 0),
            "guarded": self.guarded > 0,
            "typeChecking": self.type_checking > 0,
            "dynamic": dynamic,
        })

    def visit_Import(self, node):
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node):
        if node.level == 0 and node.module:
            self._add(node.module, node)

    def visit_Call(self, node):
        name = _literal_import_call(node)
        if name:
            self._add(name, node, dynamic=True)
        self.generic_visit(node)

    def visit_Try(self, node):
        guarded = any(_catches_import_errors(h) for h in node.handlers)
        self.guarded += guarded
        for stmt in node.body:
            self.visit(stmt)
        self.guarded -= guarded
        for part in (node.handlers, node.orelse, node.finalbody):
            for stmt in part:
                self.visit(stmt)

    visit_TryStar = visit_Try

    def visit_If(self, node):
        checking = _is_type_checking(node.test)
        self.visit(node.test)
        self.type_checking += checking
        for stmt in node.body:
            self.visit(stmt)
        self.type_checking -= checking
        for stmt in node.orelse:
            self.visit(stmt)


def scan(sources):
    imports, errors, seen = [], [], {}
    for file, text in sources.items():
        if not file.endswith(".py"):
            continue
        try:
            tree = ast.parse(text, filename=file)
        except (SyntaxError, ValueError) as exc:
            errors.append({"file": file, "message": f"{type(exc).__name__}: {exc}"})
            continue
        scanner = _Scanner(file)
        scanner.visit(tree)
        for entry in scanner.found:
            key = entry["name"]
            if key not in seen:
                seen[key] = entry
                imports.append(entry)
            else:
                # Once unguarded, executed or literal anywhere: the strongest use wins.
                first = seen[key]
                first["guarded"] = first["guarded"] and entry["guarded"]
                first["typeChecking"] = first["typeChecking"] and entry["typeChecking"]
                first["dynamic"] = first["dynamic"] and entry["dynamic"]
    return {"imports": imports, "errors": errors}


def handle(request):
    """{"sources": {...}} -> {"imports", "errors"} (launch.py's helper entry)."""
    return scan(request["sources"])


def main():
    raw = sys.stdin.read() if sys.argv[1:] == ["-"] else "".join(sys.argv[1:])
    print(json.dumps(handle(json.loads(raw))))


if __name__ == "__main__":
    main()
