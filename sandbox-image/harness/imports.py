"""The imports of a script and its files, read with Python's `ast` (nothing is executed).

Reads {"sources": {"name.py": text, ...}} as JSON (the arguments joined, or stdin when the only
argument is `-`), prints {"imports": [...], "errors": [...]}. Every `import x` and
`from x import y` is found, at the top level and nested (functions, classes, branches), plus the
other spellings of an import that name the module literally:

- `importlib.import_module("x")` and `__import__("x")`;
- the mock library's patchers, which import their target when they start:
  `patch("pkg.mod.Name")` (the module is `pkg.mod`), `patch.multiple("pkg.mod", ...)`,
  `patch.dict("pkg.mod.MAPPING", ...)` (the module is `pkg.mod`) and `patch.object(pkg.mod, ...)`
  when `pkg` is a name the file binds by importing it. `patch` counts only when it is the one of
  `unittest.mock` or `mock` (imported from there, or reached through such a module), so
  `requests.patch("https://...")` or a function of the script's own named `patch` is nothing.

A name that is only computed (`import_module("py" + "mongo")`, `patch(target)`) or printed is not
an import. Each import is reported once per module name (`google.cloud.storage`; `module` is its
top level) with where it was first seen and how it is used:

- guarded: inside a `try` that catches ImportError / ModuleNotFoundError / Exception (or all):
  the script copes without it;
- typeChecking: under `if TYPE_CHECKING:`: never executed;
- dynamic: named by one of the other spellings, not by an import statement.

Relative imports and the standard library of this interpreter (the sandbox's Python) are left
out, as are Python 2 standard modules (a Python 2 branch of a script must not install packages).
"""
import ast
import json
import re
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
MOCK_MODULES = {"unittest.mock", "mock"}
PATCHER_KINDS = {"object", "dict", "multiple"}
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


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


def _literal(node):
    """A literal string argument that names a module path (`a.b.c`), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and DOTTED.match(node.value):
        return node.value
    return None


def _dotted(node):
    """`a.b.c` as ["a", "b", "c"] for a chain of names, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


class _Bindings:
    """What a file's import statements bind, anywhere in it: the names a patcher is reached by."""

    def __init__(self, tree):
        self.modules = {}  # bound name -> the dotted module it refers to
        self.patchers = set()  # names bound to mock's `patch`
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.modules[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.modules[top] = top
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    bound = alias.asname or alias.name
                    if node.module in MOCK_MODULES and alias.name == "patch":
                        self.patchers.add(bound)
                    elif alias.name != "*":
                        self.modules[bound] = f"{node.module}.{alias.name}"

    def resolve(self, parts):
        """The dotted path a chain of names refers to through an import, or None (a local name)."""
        head = self.modules.get(parts[0])
        return ".".join([head, *parts[1:]]) if head else None

    def patcher(self, func):
        """'patch', 'object', 'dict' or 'multiple' when `func` is mock's patch or one of its kinds."""
        parts = _dotted(func)
        if not parts:
            return None
        kind = "patch"
        if len(parts) > 1 and parts[-1] in PATCHER_KINDS:
            kind, parts = parts[-1], parts[:-1]
        if parts == ["patch"] or len(parts) == 1:
            return kind if parts[0] in self.patchers else None
        if parts[-1] != "patch":
            return None
        return kind if self.resolve(parts[:-1]) in MOCK_MODULES else None


def _literal_imports(node, bindings):
    """The module paths a call imports by a literal name: importlib, __import__, mock's patchers."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    first = node.args[0] if node.args else None
    if name in ("import_module", "__import__"):
        literal = _literal(first)
        return [literal] if literal else []
    kind = bindings.patcher(func)
    if kind is None or first is None:
        return []
    if kind == "object":
        # patch.object(pkg.mod, "attr"): a module only when the chain starts at an imported name.
        parts = _dotted(first)
        target = bindings.resolve(parts) if parts else None
        return [target] if target else []
    literal = _literal(first)
    if not literal:
        return []
    if kind == "multiple":
        return [literal]
    # patch("pkg.mod.Name") and patch.dict("pkg.mod.MAPPING"): the module is what comes before the last dot.
    return [literal.rsplit(".", 1)[0]] if "." in literal else []


class _Scanner(ast.NodeVisitor):
    def __init__(self, file, bindings):
        self.file = file
        self.bindings = bindings
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
        for name in _literal_imports(node, self.bindings):
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
        scanner = _Scanner(file, _Bindings(tree))
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
