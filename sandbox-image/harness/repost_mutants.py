"""Mutants of one function of an evaluation script, made with Python's `ast` (nothing is executed).

A mutant is the script with one small change in the target function's body: an operator, a
condition, a constant, a statement, a return value or the order of a call's arguments. The tests
of a good script fail on it (the mutant is *killed*); a mutant the tests let pass *survived*.

Request: {"script": text, "target": "name" | "Class.name", "cap": 30, "seed": 0}. The target is
looked up as Python binds it: the last definition of that name at the top level, or in the
(last) class of that name. Answer: {"target", "candidates", "examined", "duplicates", "invalid",
"leftOut", "mutants": [{"operator", "line", "diff", "script"}]}: `candidates` mutation sites
found, `examined` of the visible ones tried (in a seeded random order) until `cap` mutants were
made, those whose source equals the original's or an earlier mutant's once unparsed
(`duplicates`) or that do not compile (`invalid`) left out. `leftOut` counts, by reason, the
mutants no allowed test can see and that are therefore never run nor scored:

- `output`: a site inside a printing, logging or warning call (`print`, `logger.info(...)`,
  `logging.warning(...)`, `warnings.warn(...)`, `sys.stderr.write(...)`, ...), the removal of
  such a call's statement, or a site in an `if` whose branches hold only such statements: the
  tests may not compare printed or logged output (a call's arguments are taken to have no other
  effect);
- `message`: a site in the text of an exception message (the text arguments of the exception a
  `raise` builds, an `assert`'s message), or in a text assigned to a local name that is only read
  by output calls and exception messages: the tests may not compare those texts either;
- `equivalent`: a mutant that compiles to the same bytecode as the original (instructions with
  their names and constants compared, line numbers and constants no instruction loads ignored),
  such as a change in code the compiler drops (`if 1:` -> `if 2:`, anything under `if False:`).

Every site counts in `candidates`; `output` and `message` sites are left out before the sample
is drawn (all of them are counted), `equivalent` ones as they are examined.

With `"keepLeftOut": true` in the request (a measurement of what leaving them out changes), the
sample is drawn from every site as if no rule applied and the mutants the rules would leave out
are made too, each with its reason as `leftOut`; a caller scores them apart. `line` is the mutated line within the function (its first line,
decorators included, is 1); `diff` a unified diff of the function's source against the
original; `script` the whole script with the mutant in the function's place, everything else
unchanged. The same request always gives the same mutants.

Operators (the `operator` of each mutant):

- arithmetic: `+`/`-`, `*`/`/`, `//` -> `/`, `%` -> `*`, `**` -> `*`, `<<`/`>>`, `&`/`|`, `^` -> `&`
  (also in augmented assignments); a unary `-` or `~` dropped;
- comparison: a comparison replaced by its negation (`==`/`!=`, `<`/`>=`, `>`/`<=`, `is`/`is not`,
  `in`/`not in`);
- boundary: `<`/`<=`, `>`/`>=`;
- boolean: `and`/`or`;
- negation: the condition of an `if`, `while`, conditional expression, comprehension filter or
  `assert` negated (`not` added, or an existing `not` dropped);
- constant: a number n -> n + 1 and n - 1 (so 0 <-> 1), `True`/`False`, a non-empty string or
  bytes -> empty, a non-empty list, tuple or dict display -> empty, any constant -> `None`;
- statement: a statement removed (replaced by `pass` when it is alone in its block);
- return: `return value` -> `return None`;
- arguments: two neighbouring positional arguments of a call swapped.

The change is made in the source text at the node's position (comments and layout elsewhere are
kept), then checked: the changed function must parse back to the intended tree (its unparsed
source is the intended one's; else the node is put in parentheses, else the whole function is
unparsed) and compile.

Run as `python3 repost_mutants.py` with the request as JSON on stdin, it prints the answer.
"""
import ast
import copy
import difflib
import dis
import json
import random
import sys
import types

DEFAULT_CAP = 30
MAX_DIFF_CHARS = 4000

ARITHMETIC = {
    ast.Add: [ast.Sub],
    ast.Sub: [ast.Add],
    ast.Mult: [ast.Div],
    ast.Div: [ast.Mult],
    ast.FloorDiv: [ast.Div],
    ast.Mod: [ast.Mult],
    ast.Pow: [ast.Mult],
    ast.LShift: [ast.RShift],
    ast.RShift: [ast.LShift],
    ast.BitAnd: [ast.BitOr],
    ast.BitOr: [ast.BitAnd],
    ast.BitXor: [ast.BitAnd],
}
NEGATED_COMPARISON = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
BOUNDARY = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
# (node type, field): the field holds a condition (a list of them for comprehensions).
CONDITIONS = {(ast.If, "test"), (ast.While, "test"), (ast.IfExp, "test"), (ast.Assert, "test"), (ast.comprehension, "ifs")}
# Fields never mutated: types, decorators and comments carry no behaviour a test can see.
SKIPPED_FIELDS = {"annotation", "returns", "type_comment", "decorator_list", "type_params"}
BODY_FIELDS = ("body", "orelse", "finalbody")
# Why a mutant is left out (see the module's docstring); every answer counts all three.
LEFT_OUT_REASONS = ("output", "message", "equivalent")
LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"}
OUTPUT_FUNCTIONS = {"print", "pprint"}
OUTPUT_QUALIFIED = {
    ("warnings", "warn"),
    ("warnings", "warn_explicit"),
    ("pprint", "pprint"),
    ("click", "echo"),
    ("click", "secho"),
    ("typer", "echo"),
    ("tqdm", "write"),
}
MESSAGE_KEYWORDS = {"msg", "message"}


class Candidate:
    """One mutation: `kind` says how `path` (a node, or a statement in a block) changes."""

    __slots__ = ("operator", "path", "kind", "arg", "left_out")

    def __init__(self, operator, path, kind, arg=None, left_out=None):
        self.operator, self.path, self.kind, self.arg, self.left_out = operator, path, kind, arg, left_out


def find_function(tree, target):
    """The def (or, for a class target, the class) the name binds last (Python's rule), at the top
    level or in the class path. A class target's mutants change its methods' bodies."""
    parts = target.split(".")
    scope = tree.body
    for name in parts[:-1]:
        classes = [n for n in scope if isinstance(n, ast.ClassDef) and n.name == name]
        if not classes:
            raise LookupError(f"class {name} not found for {target}")
        scope = classes[-1].body
    defs = [n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == parts[-1]]
    if not defs:
        raise LookupError(f"function {target} not found in the script")
    return defs[-1]


def _resolve(root, path):
    node = root
    for field, index in path:
        node = getattr(node, field)
        if index is not None:
            node = node[index]
    return node


def _docstring_nodes(root):
    """The docstring constants of the function and of everything defined inside it."""
    found = set()
    for node in ast.walk(root):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.add(id(first))
                found.add(id(first.value))
    return found


def _dotted(node):
    """`a.b.c` of a Name/Attribute chain as ("a", "b", "c"); () when it is something else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return tuple(reversed(parts))
    if isinstance(node, ast.Call):  # logging.getLogger(__name__).info(...)
        inner = _dotted(node.func)
        return tuple(reversed(parts)) if not inner else inner + ("()",) + tuple(reversed(parts))
    return ()


def is_output_call(node):
    """A call whose only effect a test may see is output: printing, logging, warning."""
    if not isinstance(node, ast.Call):
        return False
    name = _dotted(node.func)
    if not name:
        return False
    if len(name) == 1:
        return name[0] in OUTPUT_FUNCTIONS
    if name[-2:] in OUTPUT_QUALIFIED:
        return True
    if name[-2:] in {("stdout", "write"), ("stderr", "write")} and "sys" in name:
        return True
    # logging.info(...), logger.warning(...), self._log.error(...), logging.getLogger(x).debug(...)
    receiver = [part for part in name[:-1] if part != "()"]
    return name[-1] in LOG_METHODS and any("log" in part.lower() for part in receiver)


def _is_text(node):
    """An expression that builds a text: a string, an f-string, `%`/`+` on one, `.format`/`.join` of one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
        return _is_text(node.left) or (isinstance(node.op, ast.Add) and _is_text(node.right))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in {"format", "join"}:
        return _is_text(node.func.value)
    return False


def hidden_nodes(function):
    """{id(node): reason} of the nodes whose every mutation only changes what no allowed test may
    compare: output calls (with their statements) and the texts of exception messages, and texts
    bound to a local name read only there. Everything inside such a node is hidden too."""
    hidden = {}
    message_uses = []  # Name nodes read in an output call or as an exception message

    def message_args(call):
        return [a for a in call.args if not isinstance(a, ast.Starred)] + [k.value for k in call.keywords if k.arg in MESSAGE_KEYWORDS]

    for node in ast.walk(function):
        if isinstance(node, ast.Expr) and is_output_call(node.value):
            hidden[id(node)] = "output"
        if is_output_call(node):
            hidden[id(node)] = "output"
            message_uses.extend(n for n in ast.walk(node) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            for arg in message_args(node.exc):
                if _is_text(arg):
                    hidden.setdefault(id(arg), "message")
                    message_uses.extend(n for n in ast.walk(arg) if isinstance(n, ast.Name))
                if isinstance(arg, ast.Name):
                    message_uses.append(arg)
        elif isinstance(node, ast.Assert) and node.msg is not None:
            hidden.setdefault(id(node.msg), "message")
            message_uses.extend(n for n in ast.walk(node.msg) if isinstance(n, ast.Name))
    # An `if` whose branches only print or log (`if verbose: print(...)`): its condition decides
    # output alone. Walked innermost first, so nested ones count.
    ifs = [n for n in ast.walk(function) if isinstance(n, ast.If)]
    for node in reversed(ifs):
        if all(hidden.get(id(stmt)) == "output" for stmt in node.body + node.orelse):
            hidden[id(node)] = "output"
    # A text bound to a plain local name that is read only where a test may not look.
    quiet = {id(n) for n in message_uses}
    assigned = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and _is_text(node.value):
            assigned.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            assigned.setdefault(node.target.id, []).append(None)  # a name built in steps: left to the tests
    for name, values in assigned.items():
        if None in values:
            continue
        reads = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
        if reads and all(id(n) in quiet for n in reads):
            for value in values:
                hidden.setdefault(id(value), "message")
    return hidden


def _children(node):
    """(field, index, child) in the order `ast` defines its fields, skipping what is never mutated."""
    for field, value in ast.iter_fields(node):
        if field in SKIPPED_FIELDS:
            continue
        if isinstance(node, ast.JoinedStr):
            # Only the expressions inside an f-string, not its literal parts.
            for i, part in enumerate(value):
                if isinstance(part, ast.FormattedValue):
                    yield field, i, part
            continue
        if isinstance(node, ast.FormattedValue) and field == "format_spec":
            continue
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, ast.AST):
                    yield field, i, item
        elif isinstance(value, ast.AST):
            yield field, None, value


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def candidates(function):
    """Every mutation of the function's body, in a fixed order (source order, field by field)."""
    docstrings = _docstring_nodes(function)
    hidden = hidden_nodes(function)
    found = []

    def visit(node, path, hidden_by):
        for field, index, child in _children(node):
            if node is function and field != "body":
                continue  # the target's body only: not its parameters' defaults
            if isinstance(function, ast.ClassDef) and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and field != "body":
                continue  # a class target's methods: their bodies only, as for a function
            child_path = path + ((field, index),)
            reason = hidden_by or hidden.get(id(child))
            start = len(found)
            if (type(node), field) in CONDITIONS:
                found.append(Candidate("negation", child_path, "negate"))
            if isinstance(child, ast.stmt) and field in BODY_FIELDS and isinstance(getattr(node, field), list):
                # A decorated definition's decorators lie outside its span: left alone.
                if id(child) not in docstrings and not isinstance(child, ast.Pass) and not getattr(child, "decorator_list", None):
                    found.append(Candidate("statement", child_path, "remove"))
            node_candidates(child, child_path)
            for candidate in found[start:]:
                candidate.left_out = reason
            visit(child, child_path, reason)

    def node_candidates(node, path):
        if id(node) in docstrings:
            return
        if isinstance(node, (ast.BinOp, ast.AugAssign)):
            for op in ARITHMETIC.get(type(node.op), []):
                found.append(Candidate("arithmetic", path, "op", op))
        elif isinstance(node, ast.UnaryOp):
            if isinstance(node.op, (ast.USub, ast.Invert)):
                found.append(Candidate("arithmetic", path, "unwrap"))
            elif isinstance(node.op, ast.Not):
                found.append(Candidate("negation", path, "unwrap"))
        elif isinstance(node, ast.BoolOp):
            found.append(Candidate("boolean", path, "boolop"))
        elif isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                found.append(Candidate("comparison", path, "cmp", (i, NEGATED_COMPARISON[type(op)])))
                if type(op) in BOUNDARY:
                    found.append(Candidate("boundary", path, "cmp", (i, BOUNDARY[type(op)])))
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                found.append(Candidate("constant", path, "const", not value))
            elif _is_number(value):
                found.append(Candidate("constant", path, "const", value + 1))
                found.append(Candidate("constant", path, "const", value - 1))
            elif isinstance(value, (str, bytes)) and len(value) > 0:
                found.append(Candidate("constant", path, "const", value[:0]))
            if value is not None and value is not Ellipsis and not isinstance(value, complex):
                found.append(Candidate("constant", path, "const", None))
        elif isinstance(node, (ast.List, ast.Tuple)) and isinstance(node.ctx, ast.Load) and node.elts:
            found.append(Candidate("constant", path, "empty"))
        elif isinstance(node, ast.Dict) and node.keys:
            found.append(Candidate("constant", path, "empty"))
        elif isinstance(node, ast.Return) and node.value is not None:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                found.append(Candidate("return", path + (("value", None),), "none"))
        if isinstance(node, ast.Call):
            args = node.args
            for i in range(len(args) - 1):
                if not isinstance(args[i], ast.Starred) and not isinstance(args[i + 1], ast.Starred):
                    found.append(Candidate("arguments", path, "swap", i))

    visit(function, (), None)
    return found


def _replacement(node, candidate):
    """The node that takes `node`'s place (a fresh tree; `node` belongs to a copy)."""
    kind, arg = candidate.kind, candidate.arg
    if kind == "negate":
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return node.operand
        return ast.UnaryOp(op=ast.Not(), operand=node)
    if kind == "unwrap":
        return node.operand
    if kind == "op":
        node.op = arg()
        return node
    if kind == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return node
    if kind == "cmp":
        i, op = arg
        node.ops[i] = op()
        return node
    if kind == "const":
        return ast.Constant(value=arg)
    if kind == "empty":
        return ast.Dict(keys=[], values=[]) if isinstance(node, ast.Dict) else type(node)(elts=[], ctx=ast.Load())
    if kind == "none":
        return ast.Constant(value=None)
    if kind == "swap":
        node.args[arg], node.args[arg + 1] = node.args[arg + 1], node.args[arg]
        return node
    raise ValueError(kind)


def _copy_path(root, path):
    """A copy of `root` sharing every node but those on `path` (and their lists), which are
    copied: a mutation changes only them. Returns (copy, the copied node at `path`)."""
    top = copy.copy(root)
    node = top
    for field, index in path:
        value = getattr(node, field)
        if index is None:
            child = copy.copy(value)
            setattr(node, field, child)
        else:
            value = list(value)
            setattr(node, field, value)
            child = value[index] = copy.copy(value[index])
        node = child
    for field, value in ast.iter_fields(node):
        if isinstance(value, list):
            setattr(node, field, list(value))  # ops, args, elts: changed in place by some mutations
    return top, node


def _set(root, path, value):
    parent = _resolve(root, path[:-1])
    field, index = path[-1]
    if index is None:
        setattr(parent, field, value)
    else:
        getattr(parent, field)[index] = value


class Source:
    """The script's lines, with `ast` positions (UTF-8 byte columns) turned into text offsets."""

    def __init__(self, text):
        self.lines = text.splitlines(keepends=True)

    def char_col(self, lineno, byte_col):
        return len(self.lines[lineno - 1].encode("utf-8")[:byte_col].decode("utf-8", "replace"))


class Mutator:
    def __init__(self, script, target):
        self.script = script
        self.tree = ast.parse(script)
        self.function = find_function(self.tree, target)
        self.source = Source(script)
        fn = self.function
        self.start = min([fn.lineno] + [d.lineno for d in fn.decorator_list])
        self.end = fn.end_lineno
        self.region_lines = self.source.lines[self.start - 1 : self.end]
        if self.region_lines and not self.region_lines[-1].endswith("\n"):
            self.region_lines[-1] += "\n"
        first = self.source.lines[fn.lineno - 1]
        self.indent = first[: len(first) - len(first.lstrip())]
        self.original_key = ast.unparse(fn)
        self.seen = {self.original_key}

    # --- text

    def _offset(self, region, lineno, byte_col):
        """Offset in the region's text of a position in the script."""
        row = lineno - self.start
        return sum(len(line) for line in region[:row]) + self.source.char_col(lineno, byte_col)

    def _span(self, node):
        text = "".join(self.region_lines)
        start = self._offset(self.region_lines, node.lineno, node.col_offset)
        end = self._offset(self.region_lines, node.end_lineno, node.end_col_offset)
        return text, start, end

    def _parse_region(self, text):
        """The function parsed from its own text (inside `if 1:` when it is indented)."""
        wrapped = f"if 1:\n{text}" if self.indent else text
        tree = ast.parse(wrapped)
        body = tree.body[0].body if self.indent else tree.body
        return tree, body[0]

    # --- one mutant

    def mutate(self, candidate):
        """(key, region text, parsed tree) or None when the mutation does not apply."""
        fn, node = _copy_path(self.function, candidate.path)
        original_node = _resolve(self.function, candidate.path)
        if candidate.kind == "remove":
            return self._remove(fn, candidate, original_node)
        new = _replacement(node, candidate)
        _set(fn, candidate.path, new)
        key = ast.unparse(fn)
        if key in self.seen:
            return key, None, None
        text, start, end = self._span(original_node)
        if candidate.kind == "swap":
            # The two arguments' own text, exchanged: the rest of the call keeps its layout.
            a, b = original_node.args[candidate.arg], original_node.args[candidate.arg + 1]
            _, a0, a1 = self._span(a)
            _, b0, b1 = self._span(b)
            attempts = [text[:a0] + text[b0:b1] + text[a1:b0] + text[a0:a1] + text[b1:]]
        else:
            replacement = ast.unparse(new)
            attempts = [text[:start] + replacement + text[end:], text[:start] + "(" + replacement + ")" + text[end:]]
        return self._settle(key, attempts)

    def _remove(self, fn, candidate, original_node):
        block_path, (field, index) = candidate.path[:-1], candidate.path[-1]
        parent = _resolve(fn, block_path)
        block = list(getattr(parent, field))
        setattr(parent, field, block)
        text, start, end = self._span(original_node)
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end + 1
        before, after = text[line_start:start], text[end:line_end]
        whole_lines = before.strip() == "" and (after.strip() == "" or after.strip().startswith("#"))
        if len(block) > 1 and whole_lines:
            del block[index]
            attempt = text[:line_start] + text[line_end:]
        else:
            block[index] = ast.Pass()
            attempt = text[:start] + "pass" + text[end:]
        key = ast.unparse(fn)
        if key in self.seen:
            return key, None, None
        return self._settle(key, [attempt])

    def _settle(self, key, attempts):
        """The first text whose function unparses as the intended one (the same tree), else the
        intended function unparsed; None when even that does not give it back."""
        unparsed = "".join(self.indent + line if line.strip() else line for line in (key + "\n").splitlines(keepends=True))
        for text in attempts + [unparsed]:
            try:
                tree, parsed = self._parse_region(text)
                if ast.unparse(parsed) == key:
                    return key, text, tree
            except (SyntaxError, ValueError, RecursionError):
                continue
        return None

    # --- all of them

    def mutants(self, cap=DEFAULT_CAP, seed=0, keep_left_out=False):
        found = candidates(self.function)
        left_out = {reason: 0 for reason in LEFT_OUT_REASONS}
        for candidate in found:
            if candidate.left_out:
                left_out[candidate.left_out] += 1
        order = [i for i in range(len(found)) if keep_left_out or not found[i].left_out]
        random.Random(seed).shuffle(order)
        self.seen = seen = {self.original_key}
        original_code = _code_key(compile(self._parse_region("".join(self.region_lines))[0], "<mutant>", "exec"))
        kept, examined, duplicates, invalid = [], 0, 0, 0
        for i in order:
            if len(kept) >= cap:
                break
            examined += 1
            candidate = found[i]
            try:
                made = self.mutate(candidate)
            except (ValueError, TypeError, AttributeError, IndexError, RecursionError):
                made = None
            if made is None:
                invalid += 1
                continue
            key, region, tree = made
            if region is None:
                duplicates += 1
                continue
            try:
                code = compile(tree, "<mutant>", "exec")
            except (SyntaxError, ValueError, RecursionError):
                invalid += 1
                continue
            seen.add(key)
            reason = candidate.left_out
            if _code_key(code) == original_code:
                left_out["equivalent"] += 1
                reason = reason or "equivalent"
                if not keep_left_out:
                    continue
            node = _resolve(self.function, candidate.path)
            kept.append((node.lineno, node.col_offset, i, candidate.operator, region, reason))
        kept.sort()
        return {
            "candidates": len(found),
            "examined": examined,
            "duplicates": duplicates,
            "invalid": invalid,
            "leftOut": left_out,
            "mutants": [
                {**self._describe(operator, lineno, region), **({"leftOut": reason} if keep_left_out and reason else {})}
                for lineno, _, _, operator, region, reason in kept
            ],
        }

    def _describe(self, operator, lineno, region):
        before = self.source.lines[: self.start - 1]
        after = self.source.lines[self.end :]
        diff = "\n".join(
            difflib.unified_diff(_dedent(self.region_lines, self.indent), _dedent(region.splitlines(keepends=True), self.indent), "original", "mutant", lineterm="", n=2)
        )
        if len(diff) > MAX_DIFF_CHARS:
            diff = diff[:MAX_DIFF_CHARS] + "\n[diff cut]"
        return {"operator": operator, "line": lineno - self.start + 1, "diff": diff, "script": "".join(before) + region + "".join(after)}


def _code_key(code):
    """A code object as a comparable value without its positions: its instructions with their
    arguments resolved (a constant by value, a nested function by its own key, never by its index,
    so a constant the compiler kept but no instruction loads does not count), its names and flags.
    Two sources with the same key run the same instructions on the same values."""

    def value(v):
        return _code_key(v) if isinstance(v, types.CodeType) else (type(v).__name__, repr(v))

    instructions = tuple(
        (ins.opname, value(ins.argval)) if ins.opcode in dis.hasconst else (ins.opname, ins.arg, value(ins.argval))
        for ins in dis.get_instructions(code)
    )
    return (
        code.co_name,
        instructions,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags,
        getattr(code, "co_exceptiontable", b""),
    )


def _dedent(lines, indent):
    return [(line[len(indent) :] if line.startswith(indent) else line).rstrip("\n") for line in lines]


def handle(request):
    cap = int(request.get("cap", DEFAULT_CAP))
    seed = int(request.get("seed", 0))
    mutator = Mutator(request["script"], request["target"])
    answer = mutator.mutants(cap=cap, seed=seed, keep_left_out=bool(request.get("keepLeftOut", False)))
    answer["target"] = request["target"]
    return answer


def main():
    print(json.dumps(handle(json.loads(sys.stdin.buffer.read().decode("utf-8")))))


if __name__ == "__main__":
    main()
