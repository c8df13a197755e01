"""The values a failed `assert` compared, in its message, as pytest shows them.

In an isolated run the trusted process loads the evaluation script through `rewrite` below: each
`assert <left> <op> <right>` without a message of its own (one comparison, not a chain) becomes

    assert __repost_assert__.compare(<left>, <right>, "<op>", <role>), __repost_assert__.message()

The call evaluates the left operand, then the right, each once, as the comparison did; `compare`
applies the same operator (`operator.eq`, `operator.contains` with the operands swapped, ...),
takes its truth value and, when it is false, keeps a message for `message()`: `expected <repr>,
got <repr>` when one side calls a `*_new_implementation` or reads a name assigned from one earlier
in the same body (`b = Tally_new_implementation()`, then `b.count(w)`: the candidate's side is
"got"), else the operands with the operator. The statement is still an `assert` on its own line: it is skipped
under `-O` as before, and a failure's traceback ends at the script's line. Each repr is bounded
(`reprlib`, then cut to MAX_REPR characters) and guarded: a `__repr__` that raises gives the type's
name; one that does not end runs inside the test's own time limit. Only values of this process are
shown: what the candidate returned arrives decoded by value, and nothing here is sent to it.
"""
import ast
import operator
import reprlib
import threading

MAX_REPR = 200
NAME = "__repost_assert__"
NEW_SUFFIX = "_new_implementation"

_OPS = {
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
    ast.Is: ("is", operator.is_),
    ast.IsNot: ("is not", operator.is_not),
    ast.In: ("in", lambda left, right: operator.contains(right, left)),
    ast.NotIn: ("not in", lambda left, right: not operator.contains(right, left)),
}
_BY_TEXT = {text: fn for text, fn in _OPS.values()}


class _Short(reprlib.Repr):
    def __init__(self):
        super().__init__()
        self.maxstring = self.maxother = MAX_REPR
        self.maxlevel = 4

    def repr_instance(self, x, level):
        return _guarded(repr, x)


_SHORT = _Short()


def _guarded(fn, value):
    try:
        text = fn(value)
        if not isinstance(text, str):
            raise TypeError("__repr__ returned a non-string")
    except (Exception, SystemExit, GeneratorExit):  # noqa: BLE001 - a repr never changes the verdict
        try:
            return "<" + type(value).__qualname__ + ">"
        except Exception:  # noqa: BLE001
            return "<object>"
    return text


def short_repr(value):
    """`repr(value)` bounded to MAX_REPR characters; the type's name when repr fails."""
    text = _guarded(_SHORT.repr, value)
    return text if len(text) <= MAX_REPR else text[: MAX_REPR - 3] + "..."


class Asserts:
    """What the rewritten asserts call (`__repost_assert__` in the script's globals)."""

    def __init__(self):
        self._last = threading.local()

    def compare(self, left, right, op, role):
        if _BY_TEXT[op](left, right):
            return True
        if role == "left":
            text = f"expected {short_repr(right)}, got {short_repr(left)}"
        elif role == "right":
            text = f"expected {short_repr(left)}, got {short_repr(right)}"
        else:
            text = f"{short_repr(left)} {op} {short_repr(right)} is false"
        self._last.message = text
        return False

    def message(self):
        text = getattr(self._last, "message", "")
        self._last.message = ""
        return text


def _calls_candidate(node, derived=frozenset()):
    for sub in ast.walk(node):
        name = sub.id if isinstance(sub, ast.Name) else sub.attr if isinstance(sub, ast.Attribute) else None
        if name is not None and (name.endswith(NEW_SUFFIX) or (isinstance(sub, ast.Name) and name in derived)):
            return True
    return False


def _assigned_names(target):
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _assigned_names(element)
    elif isinstance(target, ast.Starred):
        yield from _assigned_names(target.value)


def _note_derived(statement, derived):
    """Adds to `derived` the names `statement` assigns from the candidate (a label for messages only)."""
    if isinstance(statement, ast.Assign):
        targets, value = statement.targets, statement.value
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and statement.value is not None:
        targets, value = [statement.target], statement.value
    else:
        return
    if _calls_candidate(value, derived):
        for target in targets:
            derived.update(_assigned_names(target))


def _rewritten(node, derived=frozenset()):
    """The assert `node` rewritten, or `node` itself when it is not one comparison without a message."""
    test = node.test
    if node.msg is not None or not isinstance(test, ast.Compare) or len(test.ops) != 1 or type(test.ops[0]) not in _OPS:
        return node
    left, right = test.left, test.comparators[0]
    in_left, in_right = _calls_candidate(left, derived), _calls_candidate(right, derived)
    role = "left" if in_left and not in_right else "right" if in_right and not in_left else ""
    op = _OPS[type(test.ops[0])][0]
    call = ast.Call(
        func=ast.Attribute(value=ast.Name(id=NAME, ctx=ast.Load()), attr="compare", ctx=ast.Load()),
        args=[left, right, ast.Constant(op), ast.Constant(role)],
        keywords=[],
    )
    message = ast.Call(func=ast.Attribute(value=ast.Name(id=NAME, ctx=ast.Load()), attr="message", ctx=ast.Load()), args=[], keywords=[])
    # Every node made here gets the comparison's place, so the tree needs no other fixing.
    for made in (call, call.func, call.func.value, call.args[2], call.args[3], message, message.func, message.func.value):
        ast.copy_location(made, test)
    return ast.copy_location(ast.Assert(test=call, msg=message), node)


# The fields of a statement that hold statements (an assert is a statement, never inside an expression).
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _rewrite_statements(statements, derived=None):
    """Rewrites the asserts of `statements`; `derived`: the names assigned from the candidate so far
    in this body (a function's body starts with those of the body around it)."""
    derived = set() if derived is None else derived
    for i, statement in enumerate(statements):
        if isinstance(statement, ast.Assert):
            statements[i] = _rewritten(statement, derived)
            continue
        _note_derived(statement, derived)
        scope = set(derived) if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else derived
        for field in _BODIES:
            inner = getattr(statement, field, None)
            if isinstance(inner, list):
                _rewrite_statements(inner, scope)


def rewrite(source, filename):
    """The script's module tree with its comparing asserts rewritten (compile it as the source
    would be compiled); None when the source does not parse, so that compiling the source itself
    raises its SyntaxError as before."""
    try:
        tree = ast.parse(source, filename)
    except (SyntaxError, ValueError):
        return None
    _rewrite_statements(tree.body)
    return tree
