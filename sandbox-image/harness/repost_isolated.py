"""The candidate in a process of its own: the trusted side (the script's process) and the
candidate's side (another process, another uid) of an isolated run.

launch.py starts both when a request holds `candidate`:

- the *trusted process* (uid 10001) runs the evaluation script as `__main__` with the original,
  the tests and the harness's report channel. Its `<name>_new_implementation` is a stub placed
  by the caller, whose calls go to `Host` below;
- the *candidate process* (uid 10003, group 10001) holds the candidate module only: the script's
  definitions with the target replaced by the candidate (so the target's name, recursion and the
  script's other functions reach the candidate), no test, no copy of the ground truth, and no
  descriptor but its end of the call socket. It runs `serve` below.

Values cross by value. What the trusted side sends is pickled; what comes back is unpickled by
`TrustedUnpickler`, which builds only builtin values, the script's own classes, a checked list of
standard-library and package reconstructors, and the classes of the third-party packages the
script itself imports (never a test or mocking library's): never a callable the candidate chose.
What cannot cross by value (a callback the test passes, a mock, a lock, a file) stays in the
trusted process and the candidate gets a reference: it may call it and read its public
attributes, never set anything on it, and each such call runs in the trusted process with
arguments decoded the same way. Arguments mutated in place and the method's object come back and
are written into the trusted side's objects. During a call the candidate sees the trusted side's
active `unittest.mock` patches, rebound script globals, environment, working folder and random
states; its output goes to the trusted side's current streams.

A candidate that ends its process, sends what the decoder refuses or breaks the protocol fails
the run with a named kind (`Host.failure`), which the trusted side's report carries to the
supervisor: the candidate itself holds no way to say anything to the supervisor.
"""
import io
import os
import pickle
import struct
import sys
import types

HEADER = struct.Struct("!Q")
MAX_MESSAGE = 256 * 1024 * 1024
NEW_SUFFIX = "_new_implementation"


# ----------------------------------------------------------------------------------------- wire

def _read_exact(fd, n):
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def send_bytes(fd, data):
    data = HEADER.pack(len(data)) + data
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def recv_bytes(fd):
    """The next message, None at the end of the stream; ValueError when it is larger than allowed."""
    head = _read_exact(fd, HEADER.size)
    if head is None:
        return None
    (size,) = HEADER.unpack(head)
    if size > MAX_MESSAGE:
        raise ValueError(f"a message of {size} bytes (at most {MAX_MESSAGE})")
    body = _read_exact(fd, size)
    if body is None:
        return None
    return body


# ------------------------------------------------------------------------------- trusted side

class CandidateFailure(BaseException):
    """The candidate ended its process, broke the protocol or sent what the harness does not
    decode. A BaseException, so a test's `except Exception` cannot swallow it."""


class CandidateRaised(Exception):
    """The candidate raised an exception of a type the trusted side does not rebuild."""


def _safe_type(value):
    """`type(x)` for the singletons whose type pickle rebuilds this way (NoneType and the like)."""
    if value is None or value is Ellipsis or value is NotImplemented:
        return type(value)
    raise pickle.UnpicklingError("type() of a value other than None, Ellipsis or NotImplemented")


_BUILTIN_VALUES = {
    "complex", "set", "frozenset", "bytearray", "range", "slice", "list", "dict", "tuple", "int",
    "float", "str", "bytes", "bool", "memoryview",
}
# Exceptions a candidate's call may end with and the tests may expect (not SystemExit & co).
_NOT_REBUILT = {"SystemExit", "KeyboardInterrupt", "GeneratorExit", "BaseException", "BaseExceptionGroup"}
# Reconstructors checked by hand: they build a value from data and call nothing they are given.
_CHECKED = {
    ("collections", "OrderedDict"), ("collections", "defaultdict"), ("collections", "deque"),
    ("collections", "Counter"), ("datetime", "date"), ("datetime", "time"), ("datetime", "datetime"),
    ("datetime", "timedelta"), ("datetime", "timezone"), ("decimal", "Decimal"),
    ("fractions", "Fraction"), ("uuid", "UUID"), ("uuid", "SafeUUID"), ("pathlib", "PurePosixPath"),
    ("pathlib", "PosixPath"), ("pathlib", "Path"), ("pathlib", "PurePath"), ("re", "_compile"),
    ("array", "_array_reconstructor"), ("array", "array"), ("types", "SimpleNamespace"),
    ("enum", "Enum"), ("ipaddress", "IPv4Address"), ("ipaddress", "IPv6Address"),
    ("ipaddress", "IPv4Network"), ("ipaddress", "IPv6Network"), ("zoneinfo", "ZoneInfo"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer"),
    ("numpy", "dtype"), ("numpy", "ndarray"), ("numpy.ma.core", "_mareconstruct"),
    ("numpy.random._pickle", "__generator_ctor"), ("numpy.random._pickle", "__bit_generator_ctor"),
    ("numpy.random._pickle", "__randomstate_ctor"),
    ("pandas._libs.internals", "_unpickle_block"), ("pandas.core.internals.blocks", "new_block"),
    ("pandas.core.indexes.base", "_new_Index"), ("pandas._libs.tslibs.timestamps", "_unpickle_timestamp"),
    ("pandas._libs.tslibs.timedeltas", "_timedelta_unpickle"), ("pandas._libs.tslibs.nattype", "__nat_unpickle"),
    ("pandas._libs.arrays", "__pyx_unpickle_NDArrayBacked"), ("pandas.core.arrays.categorical", "_unpickle"),
}
# Test and mocking libraries: their objects can be made to equal anything.
_NEVER = {"unittest", "mock", "pytest", "_pytest", "hypothesis", "doctest", "pytest_mock", "builtins", "sys", "os",
          "posix", "subprocess", "ctypes", "_ctypes", "importlib", "pickle", "_pickle", "marshal", "types", "code",
          "codeop", "runpy", "gc", "inspect", "operator", "functools", "itertools", "threading", "_thread",
          "multiprocessing", "signal", "socket", "shutil", "io", "_io", "weakref", "atexit", "copyreg", "copy"}


class TrustedUnpickler(pickle.Unpickler):
    """Decodes what the candidate sends: see the module's docstring for what it builds."""

    def __init__(self, data, host):
        super().__init__(io.BytesIO(data))
        self.host = host

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and len(pid) == 2 and isinstance(pid[1], int):
            if pid[0] == "ref" and pid[1] in self.host.refs:
                return self.host.refs[pid[1]]
            if pid[0] == "back" and 0 <= pid[1] < len(self.host.shared):
                return self.host.shared[pid[1]]
        raise pickle.UnpicklingError("a reference the trusted side never gave")

    def find_class(self, module, name):
        host = self.host
        if module == "builtins":
            if name in _BUILTIN_VALUES:
                return getattr(__builtins__, name) if not isinstance(__builtins__, dict) else __builtins__[name]
            if name == "type":
                return _safe_type
            obj = (__builtins__ if isinstance(__builtins__, dict) else vars(__builtins__)).get(name)
            if isinstance(obj, type) and issubclass(obj, BaseException) and name not in _NOT_REBUILT:
                return obj
            raise pickle.UnpicklingError(f"builtins.{name} is not a value the harness decodes")
        if (module, name) in _CHECKED:
            return _lookup(module, name)
        if module == "__main__" or (host.main is not None and module == host.main.__name__):
            obj = host.main.__dict__.get(name) if host.main is not None else None
            if host.class_target is not None and name == host.class_target and host.stub_class is not None:
                return host.stub_class
            if isinstance(obj, type) and obj.__module__ == host.main.__name__ and obj.__qualname__ == name:
                return obj
            raise pickle.UnpicklingError(f"{module}.{name} is not a class the script defines")
        top = module.split(".")[0]
        if top in host.packages and top not in _NEVER:
            obj = _lookup(module, name)
            if isinstance(obj, type) and not _is_mock_type(obj):
                return obj
        raise pickle.UnpicklingError(f"{module}.{name} is not a type the harness decodes")


def _lookup(module, name):
    mod = sys.modules.get(module)
    if mod is None:
        import importlib

        mod = importlib.import_module(module)
    obj = mod
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _is_mock_type(cls):
    mock = sys.modules.get("unittest.mock")
    return mock is not None and issubclass(cls, (mock.NonCallableMock, mock._ANY if hasattr(mock, "_ANY") else mock.NonCallableMock))


def _is_mock(obj):
    mock = sys.modules.get("unittest.mock")
    return mock is not None and isinstance(obj, (mock.NonCallableMock, getattr(mock, "_ANY", mock.NonCallableMock)))


def _shareable(obj):
    """Objects whose identity and state the candidate's process gives back: containers and instances."""
    if isinstance(obj, (list, dict, set, bytearray)):
        return True
    if isinstance(obj, (type, types.ModuleType, types.FunctionType, types.MethodType, BaseException)):
        return False
    cls = type(obj)
    if cls.__module__ == "numpy" and cls.__name__ == "ndarray":
        return True
    return hasattr(obj, "__dict__") and not isinstance(obj, (str, bytes, int, float, tuple, frozenset))


def _state_of(obj):
    """A shared object's contents, as a new value (what it holds, not itself)."""
    if isinstance(obj, list):
        return ("list", list(obj))
    if isinstance(obj, dict):
        return ("dict", dict(obj), dict(vars(obj)) if hasattr(obj, "__dict__") else None)
    if isinstance(obj, set):
        return ("set", set(obj))
    if isinstance(obj, bytearray):
        return ("bytes", bytes(obj))
    cls = type(obj)
    if cls.__module__ == "numpy" and cls.__name__ == "ndarray":
        return ("array", obj.copy())
    return ("dict", None, dict(vars(obj)))


def _set_state(obj, state):
    """Writes contents the candidate's process sent back into the trusted side's object, in place."""
    if not isinstance(state, tuple) or not state:
        return
    try:
        kind = state[0]
        if kind == "list" and isinstance(obj, list):
            obj[:] = state[1]
        elif kind == "set" and isinstance(obj, set):
            obj.clear()
            obj.update(state[1])
        elif kind == "bytes" and isinstance(obj, bytearray):
            obj[:] = state[1]
        elif kind == "array":
            if obj.shape == state[1].shape and obj.dtype == state[1].dtype:
                obj[...] = state[1]
        elif kind == "dict":
            if isinstance(obj, dict) and isinstance(state[1], dict):
                obj.clear()
                obj.update(state[1])
            if isinstance(state[2], dict) and hasattr(obj, "__dict__"):
                obj.__dict__.clear()
                obj.__dict__.update(state[2])
    except Exception:  # noqa: BLE001 - an object that cannot take the state back keeps its own
        pass


# Values that are never shared nor a reference: the per-object hooks return at once for them.
_ATOMS = frozenset({int, float, complex, str, bytes, bool, type(None)})


class _TrustedPickler(pickle.Pickler):
    """What goes to the candidate: by value, except what must stay in the trusted process. With
    `collect`, every shareable object met is listed (once), for the candidate to give back."""

    def __init__(self, buf, host, collect=None):
        super().__init__(buf, protocol=5)
        self.host = host
        self.collect = collect
        self.collected = set()

    def persistent_id(self, obj):
        if type(obj) in _ATOMS:
            return None
        ref = self._persistent_id(obj)
        if ref is None and self.collect is not None and id(obj) not in self.collected and _shareable(obj):
            self.collected.add(id(obj))
            self.collect.append(obj)
            # Its __dict__ is pickled as its state and rebuilt into a new one over there: the object
            # itself carries that state back, never the dict on its own.
            if not isinstance(obj, dict) and isinstance(getattr(obj, "__dict__", None), dict):
                self.collected.add(id(obj.__dict__))
        return ref

    def _persistent_id(self, obj):
        if isinstance(obj, (str, bytes, int, float, bool, type(None), tuple, list, dict, set, frozenset, bytearray, complex, range, slice, memoryview, pickle.PickleBuffer)):
            return None
        if isinstance(obj, types.ModuleType):
            return ("module", obj.__name__)
        host = self.host
        if isinstance(obj, (types.FunctionType, types.MethodType, types.BuiltinMethodType, types.LambdaType)):
            module = getattr(obj, "__module__", None)
            qualname = getattr(obj, "__qualname__", "")
            bound_to = getattr(obj, "__self__", None)
            if module == "__main__" or module == host.script_module or "<locals>" in qualname or "<lambda>" in qualname or isinstance(obj, types.MethodType) or (bound_to is not None and not isinstance(bound_to, types.ModuleType)):
                return ("ref", host.register(obj))
            return None
        if isinstance(obj, type):
            return ("ref", host.register(obj)) if "<locals>" in obj.__qualname__ else None
        if _is_mock(obj) or isinstance(obj, types.GeneratorType) or "<locals>" in type(obj).__qualname__:
            return ("ref", host.register(obj))
        try:
            reduced = obj.__reduce_ex__(5)
        except Exception:  # noqa: BLE001 - a lock, a file, a socket: it stays here
            return ("ref", host.register(obj))
        if isinstance(reduced, tuple) and reduced and getattr(reduced[0], "__qualname__", "").find("<locals>") >= 0:
            return ("ref", host.register(obj))
        return None


def _dumps_trusted(obj, host, shared=None):
    """`obj` pickled; with `shared` (a list), the objects the candidate gives back are collected first
    and sent along, so both sides agree on which object is which."""
    if shared is not None:
        _TrustedPickler(io.BytesIO(), host, shared).dump(obj)
        obj = ("shared", obj, shared)
    buf = io.BytesIO()
    _TrustedPickler(buf, host).dump(obj)
    return buf.getvalue()


class RemoteIterator:
    """A generator the candidate returned: each item comes by value as it is asked for."""

    def __init__(self, host, gen_id):
        self._host, self._id = host, gen_id

    def __iter__(self):
        return self

    def __next__(self):
        return self._host._next(self._id)


_STUB_DUNDERS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__len__", "__iter__", "__contains__",
                 "__getitem__", "__setitem__", "__delitem__", "__str__", "__repr__", "__bool__", "__call__", "__add__",
                 "__sub__", "__mul__", "__truediv__", "__enter__", "__exit__")


def _stub_base(host):
    class Stub:
        def __init_subclass__(cls, **kwargs):
            super().__init_subclass__(**kwargs)
            host.stub_class = cls

        def __init__(self, *args, **kwargs):
            made = host._roundtrip(("call", "__new__", None, args, kwargs, host._surroundings()), None, args, kwargs)
            if isinstance(made, Stub):
                self.__dict__.update(made.__dict__)

        def __getattr__(self, name):
            if name.startswith("__") or name.startswith("_repost"):
                raise AttributeError(name)
            value = host.call_method(f"{host.target}.{name}", self, None, None)
            if isinstance(value, tuple) and value == ("__repost_method__",):
                return lambda *args, **kwargs: host.call_method(f"{host.target}.{name}", self, args, kwargs)
            return value

        def __hash__(self):
            if "__hash__" in host._defined_dunders():
                return host.call_method(f"{host.target}.__hash__", self, (), {})
            return object.__hash__(self)

    def forward(name):
        fallback = getattr(object, name, None)

        def method(self, *args):
            if name in host._defined_dunders():
                return host.call_method(f"{host.target}.{name}", self, args, {})
            if fallback is not None:
                return fallback(self, *args)
            raise TypeError(f"{type(self).__name__} has no {name}")

        method.__name__ = name
        return method

    for name in _STUB_DUNDERS:
        setattr(Stub, name, forward(name))
    return Stub


class _Fingerprints:
    """A stand-in host for fingerprinting a call's arguments: what would stay in the trusted process counts by identity."""

    @staticmethod
    def register(obj):
        return id(obj)


_SEQUENCES = (list, tuple, set, frozenset)


def _type_name(value):
    if isinstance(value, (types.GeneratorType, RemoteIterator)):
        return "generator"
    if isinstance(value, (types.FunctionType, types.MethodType, types.BuiltinFunctionType, RemoteFunction)):
        return "function"
    t = type(value)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _signature(value, depth=0):
    """The exact types in a value, a few levels deep (the kinds of elements of a container, not their order)."""
    name = _type_name(value)
    if depth >= 3:
        return name
    if isinstance(value, _SEQUENCES):
        items = list(value)[:64]
        return (name, tuple(sorted({repr(_signature(x, depth + 1)) for x in items})))
    if isinstance(value, dict):
        items = list(value.items())[:64]
        return (name, tuple(sorted({repr((_signature(k, depth + 1), _signature(v, depth + 1))) for k, v in items})))
    return name


def _describe_signature(sig):
    return sig if isinstance(sig, str) else f"{sig[0]} of {', '.join(sig[1]) or 'nothing'}"[:200]


class RemoteFunction:
    """A function the candidate returned (a closure, say): calling it runs it in the candidate's process."""

    def __init__(self, host, function_id):
        self._host, self._id = host, function_id

    def __call__(self, *args, **kwargs):
        return self._host.invoke(self._id, args, kwargs)


class Host:
    """The trusted side: `<name>_new_implementation` stubs call `call` and `call_method`."""

    def __init__(self, fds, target, kind, packages):
        self.rfd, self.wfd = fds
        self.target = target
        self.kind = kind
        self.packages = set(packages)
        self.refs = {}
        self._ref_ids = {}
        self.failure = None
        self.main = None
        self.script_module = "__main__"
        self.broken = None
        self.class_target = target if kind == "class" else None
        self.stub_class = None
        self.baseline = None
        self.patches = []
        self.shared = []
        self._dunders = None
        self._signatures = {}
        self._last_environ = None
        self.calls = 0

    # -- what the candidate may hold of ours
    def register(self, obj):
        key = id(obj)
        ref = self._ref_ids.get(key)
        if ref is None or self.refs.get(ref) is not obj:
            ref = len(self.refs) + 1
            self.refs[ref] = obj
            self._ref_ids[key] = ref
        return ref

    def _fail(self, kind, detail):
        if self.failure is None:
            self.failure = {"kind": kind, "detail": detail[:500]}
        raise CandidateFailure(f"{kind}: {detail}") from None

    def _decode(self, data):
        try:
            return TrustedUnpickler(data, self).load()
        except CandidateFailure:
            raise
        except Exception as exc:  # noqa: BLE001 - anything the decoder refuses or cannot build
            self._fail("forbidden_value", f"the candidate sent a value the harness does not decode ({type(exc).__name__}: {exc})")

    def _send(self, message, shared=None):
        try:
            data = _dumps_trusted(message, self, shared)
        except Exception as exc:  # noqa: BLE001
            raise CandidateRaised(f"the harness could not send the call's arguments to the candidate: {type(exc).__name__}: {exc}") from None
        try:
            send_bytes(self.wfd, data)
        except OSError:
            self._fail("candidate_exit", "the candidate's process ended")

    def _receive(self):
        """Serves the candidate's requests until its answer to ours comes."""
        while True:
            try:
                data = recv_bytes(self.rfd)
            except (OSError, ValueError) as exc:
                self._fail("protocol", f"the candidate's channel broke: {exc}")
            if data is None:
                self._fail("candidate_exit", "the candidate's process ended during a call (it exited, was killed or crashed)")
            message = self._decode(data)
            if not isinstance(message, tuple) or not message or not isinstance(message[0], str):
                self._fail("protocol", "a message outside the harness's protocol")
            if message[0] == "op":
                self._send(self._serve_op(message))
                continue
            return message

    def _serve_op(self, message):
        """One thing the candidate asks of an object it holds a reference to."""
        if len(message) != 5 or not isinstance(message[1], int) or message[1] not in self.refs:
            self._fail("protocol", "a request for an object the trusted side never gave")
        _, ref, op, args, kwargs = message
        obj = self.refs[ref]
        if not isinstance(args, tuple) or not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
            self._fail("protocol", "a malformed request")
        try:
            if op == "call":
                self._refuse_original(obj)
                value = obj(*args, **kwargs)
            elif op == "getattr" and args == ("__dict__",):
                value = dict(vars(obj))
                for v in value.values():
                    self._refuse_original(getattr(v, "__func__", v))
            elif op == "getattr" and len(args) == 1 and isinstance(args[0], str) and _public(args[0], obj):
                value = getattr(obj, args[0])
            elif op in _OPERATIONS and not kwargs:
                value = _OPERATIONS[op](obj, *args)
            else:
                raise AttributeError(f"the harness does not let the candidate use {op!r} of this object")
            self._refuse_original(value)
            return ("ok", value)
        except CandidateFailure:
            raise
        except Exception as exc:  # noqa: BLE001 - raised in the candidate's process instead
            return ("err", _portable_exception(exc))

    def _originals(self):
        """The ground truth's own code objects: never called for, nor handed to, the candidate."""
        main = self.main or sys.modules.get("__main__")
        codes = set()
        owner = main
        for part in self.target.split("."):
            owner = getattr(owner, part, None) if owner is not None else None
        if owner is not None:
            if isinstance(owner, type):
                codes.update(id(getattr(v, "__code__", None)) for v in vars(owner).values() if getattr(v, "__code__", None) is not None)
            fn = getattr(owner, "__func__", owner)
            fn = getattr(fn, "__wrapped__", fn)
            if getattr(fn, "__code__", None) is not None:
                codes.add(id(fn.__code__))
        return codes

    def _refuse_original(self, obj):
        fn = getattr(obj, "__func__", obj)
        code = getattr(fn, "__code__", None) if isinstance(fn, (types.FunctionType, types.MethodType)) else None
        if code is not None and id(code) in self._originals():
            self._fail("forbidden_value", "the candidate reached for the ground truth through an object the tests handed it")
        if isinstance(obj, type) and self.kind == "class" and obj.__qualname__ == self.target and obj.__module__ == self.script_module:
            self._fail("forbidden_value", "the candidate reached for the ground truth's class through an object the tests handed it")

    # -- the surroundings of a call, as the script's process has them now
    def _surroundings(self):
        """What the candidate's process applies for the call. The plain part (random states, the
        environment, the working folder: builtin values and NumPy's state only) travels pickled on
        its own by the C pickler, without the per-object hook the rest of a call needs."""
        env = {}
        rnd = sys.modules.get("random")
        if rnd is not None:
            env["random"] = rnd.getstate()
        np = sys.modules.get("numpy")
        if np is not None and hasattr(np, "random"):
            try:
                env["np_random"] = np.random.get_state()
            except Exception:  # noqa: BLE001
                pass
        environ = dict(os.environ)
        if environ != self._last_environ:
            env["environ"] = environ
            self._last_environ = environ
        env["cwd"] = os.getcwd()
        env = {"plain": pickle.dumps(env, protocol=5)}
        env["patches"] = [p for p in (_patch_spec(p) for p in list(self.patches)) if p is not None] + self._class_changes()
        if self.baseline is not None and self.main is not None:
            skip = {self.target.split(".")[0], self.target.split(".")[0] + NEW_SUFFIX}
            env["globals"] = {
                k: v for k, v in self.main.__dict__.items()
                if k in self.baseline and self.baseline[k] is not v and not k.startswith("__") and k not in skip and not isinstance(v, types.ModuleType)
            }
        return env

    def _take_back(self, env, output):
        if isinstance(env, bytes):
            # The random states the candidate's process has after the call, decoded as everything it sends.
            env = self._decode(env)
        if isinstance(env, dict):
            rnd = sys.modules.get("random")
            if rnd is not None and "random" in env:
                try:
                    rnd.setstate(env["random"])
                except Exception:  # noqa: BLE001
                    pass
            np = sys.modules.get("numpy")
            if np is not None and "np_random" in env:
                try:
                    np.random.set_state(env["np_random"])
                except Exception:  # noqa: BLE001
                    pass
        if isinstance(output, tuple) and len(output) == 2:
            out, err = output
            if isinstance(out, str) and out:
                sys.stdout.write(out)
            if isinstance(err, str) and err:
                sys.stderr.write(err)

    # -- calls
    def _roundtrip(self, message, self_obj, args, kwargs):
        if self.broken:
            self._fail("candidate_exit", self.broken)
        self.calls += 1
        shared = []
        self._send(message, shared)
        saved, self.shared = self.shared, shared
        try:
            reply = self._receive()
        except CandidateFailure:
            raise
        except BaseException:
            # Interrupted while the candidate still works on the call (a snippet's time limit): its
            # answer would come to the next call, so no call is sent again.
            self.broken = "the candidate did not answer an earlier call in time"
            raise
        finally:
            self.shared = saved
        tag = reply[0]
        if tag in ("return", "raise") and len(reply) == 5:
            _, value, env, output, states = reply
            self._take_back(env, output)
            if isinstance(states, list) and len(states) == len(shared):
                for obj, state in zip(shared, states):
                    _set_state(obj, state)
            if tag == "raise":
                raise _rebuilt_exception(value)
            return self._value(value)
        if tag == "ended":
            self._fail("candidate_exit", str(reply[1]) if len(reply) > 1 else "the candidate ended its process")
        self._fail("protocol", f"an answer the harness does not expect ({tag!r})")

    def _value(self, value):
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], int):
            if value[0] == "__repost_generator__":
                return RemoteIterator(self, value[1])
            if value[0] == "__repost_function__":
                return RemoteFunction(self, value[1])
        return value

    def _next(self, gen_id):
        self._send(("next", gen_id, self._surroundings()))
        reply = self._receive()
        if reply[0] == "yield" and len(reply) == 4:
            self._take_back(reply[2], reply[3])
            return self._value(reply[1])
        if reply[0] == "stop" and len(reply) == 3:
            self._take_back(reply[1], reply[2])
            raise StopIteration
        if reply[0] == "raise" and len(reply) == 4:
            self._take_back(reply[2], reply[3])
            raise _rebuilt_exception(reply[1])
        if reply[0] == "ended":
            self._fail("candidate_exit", "the candidate's process ended")
        self._fail("protocol", "an answer the harness does not expect")

    def call(self, name, args, kwargs):
        """`name_new_implementation(*args, **kwargs)`: the candidate's `name` in its process."""
        key = self._key((args, kwargs))
        value = self._roundtrip(("call", name, None, args, kwargs, self._surroundings()), None, args, kwargs)
        self._observed("candidate", key, value)
        return value

    def call_method(self, qualname, obj, args, kwargs):
        """`obj.method_new_implementation(...)`: the candidate's method on a copy of `obj`, whose state comes
        back (a class for a classmethod, nothing for a staticmethod)."""
        key = self._key((obj, args, kwargs))
        value = self._roundtrip(("call", qualname, obj, args, kwargs, self._surroundings()), obj, args, kwargs)
        self._observed("candidate", key, value)
        return value

    # -- the type of what the ground truth returns on the same call
    def _key(self, value):
        """What identifies a call: its arguments (and object) as they are before it, pickled; None when they do not pickle."""
        try:
            # Plain values (the common case) by the C pickler alone; what it refuses (a local function,
            # a mock, a lock) by the per-object hook, where what stays here counts by its identity.
            data = pickle.dumps(value, protocol=5)
        except Exception:  # noqa: BLE001
            buf = io.BytesIO()
            try:
                _TrustedPickler(buf, _Fingerprints()).dump(value)
            except Exception:  # noqa: BLE001
                return None
            data = b"\0" + buf.getvalue()
        return (len(data), hash(data))

    def _observed(self, side, key, value):
        """Records the type of one side's result for a call; a candidate whose result on a call the
        ground truth also answered has another type fails the run (`wrong_type`), whatever the tests say."""
        if key is None:
            return
        seen = self._signatures.setdefault(key, {})
        seen.setdefault(side, _signature(value))
        if "truth" in seen and "candidate" in seen and seen["truth"] != seen["candidate"] and self.failure is None:
            self.failure = {
                "kind": "wrong_type",
                "detail": f"on the same call the ground truth returns {_describe_signature(seen['truth'])} and the candidate {_describe_signature(seen['candidate'])}"[:500],
            }

    def _watch(self, namespace):
        """Wraps the original target (a function, or a plain method) so the type of what it returns on each
        call the tests make is known; calls it makes to itself go straight through."""
        import functools

        parts = self.target.split(".")
        owner = namespace if len(parts) == 1 else None
        if owner is None:
            cls = namespace.get(parts[0])
            for part in parts[1:-1]:
                cls = getattr(cls, part, None)
            if not isinstance(cls, type) or not isinstance(vars(cls).get(parts[-1]), types.FunctionType):
                return
            original, method = vars(cls)[parts[-1]], True
        else:
            original, method = namespace.get(parts[0]), False
            if not isinstance(original, types.FunctionType):
                return
        host, depth = self, [0]

        @functools.wraps(original)
        def watched(*args, **kwargs):
            if depth[0]:
                return original(*args, **kwargs)
            key = host._key((args[0], args[1:], kwargs) if method else (args, kwargs))
            depth[0] += 1
            try:
                value = original(*args, **kwargs)
            finally:
                depth[0] -= 1
            host._observed("truth", key, value)
            return value

        if method:
            setattr(cls, parts[-1], watched)
        else:
            namespace[parts[0]] = watched

    def get_property(self, qualname, obj):
        """`obj.prop_new_implementation`: the candidate's property read on a copy of `obj`."""
        return self._roundtrip(("call", qualname, obj, None, None, self._surroundings()), obj, (), {})

    def invoke(self, function_id, args, kwargs):
        """A function the candidate returned, called: it runs in the candidate's process."""
        return self._roundtrip(("invoke", function_id, None, args, kwargs, self._surroundings()), None, args, kwargs)

    @staticmethod
    def source_loader(source):
        return SourceLoader(source)

    # -- a class target: `Class_new_implementation` is a stub class whose objects live here by value
    def stub_base(self):
        """The base of the script's `<Class>_new_implementation` stub: constructing it, calling its
        methods, reading its properties and its special methods run the candidate's class there, on
        a copy of the object whose state comes back into this one."""
        return _stub_base(self)

    def _defined_dunders(self):
        if self._dunders is None:
            self._dunders = set(self._roundtrip(("call", "__dunders__", None, (), {}, self._surroundings()), None, (), {}) or ())
        return self._dunders

    # -- what the script gives the host before its tests
    def ready(self, namespace):
        """Called by the stub's line before the tests: the script's globals as defined so far."""
        self.script_module = namespace.get("__name__", "__main__")
        self.main = sys.modules.get(self.script_module)
        self.baseline = dict(namespace)
        self.class_baseline = [
            (v, dict(vars(v))) for v in namespace.values() if isinstance(v, type) and v.__module__ == self.script_module and "<locals>" not in v.__qualname__
        ]
        _track_patches(self)
        if self.kind == "function":
            self._watch(namespace)

    def _class_changes(self):
        """Attributes the tests set on the script's classes since its definitions ran (a method replaced
        by hand, say): the candidate's process sees them too. Never the target or its stub."""
        member = self.target.split(".")[-1]
        out = []
        for cls, base in getattr(self, "class_baseline", ()):
            for name, value in vars(cls).items():
                if name.startswith("__") or name.endswith(NEW_SUFFIX) or base.get(name) is value:
                    continue
                if name == member and cls.__qualname__ == ".".join(self.target.split(".")[:-1]):
                    continue
                out.append(("class", self.script_module, cls.__qualname__, name, value, isinstance(value, types.FunctionType)))
        return out


def _with_enter(obj):
    return type(obj).__enter__(obj)


def _with_exit(obj, *exc_info):
    return type(obj).__exit__(obj, *exc_info)


# What the candidate may do with an object it holds a reference to, done as Python would do it.
_OPERATIONS = {
    "__enter__": _with_enter, "__exit__": _with_exit, "__iter__": iter, "__next__": next, "__len__": len,
    "__getitem__": lambda o, k: o[k], "__setitem__": lambda o, k, v: o.__setitem__(k, v), "__contains__": lambda o, x: x in o,
    "__bool__": bool, "__str__": str, "__repr__": repr, "__eq__": lambda o, x: o == x, "__hash__": hash,
}
_FORWARDED_DUNDERS = set(_OPERATIONS)
_MOCK_ONLY = ("assert_", "configure_mock", "reset_mock", "attach_mock", "mock_add_spec", "side_effect", "return_value")
# Dunder attributes the candidate may read of an object of the tests (a class passed to it, say).
_READABLE_DUNDERS = {"__name__", "__qualname__", "__module__", "__doc__", "__dataclass_fields__", "__attrs_attrs__",
                     "__annotations__", "__dataclass_params__", "__match_args__"}


def _public(name, obj):
    if name in _READABLE_DUNDERS:
        return True
    if name.startswith("_"):
        return False
    return not (_is_mock(obj) and name.startswith(_MOCK_ONLY))


def _portable_exception(exc):
    """An exception as the other side can rebuild it: the exception itself when it pickles, else its type name and text."""
    try:
        pickle.dumps(exc, protocol=5)
        return exc
    except Exception:  # noqa: BLE001
        return ("__repost_exception__", type(exc).__module__, type(exc).__qualname__, str(exc))


def _rebuilt_exception(value):
    if isinstance(value, BaseException):
        if not isinstance(value, Exception):
            return CandidateFailure(f"the candidate ended with {type(value).__name__}")
        return value
    if isinstance(value, tuple) and len(value) == 4 and value[0] == "__repost_exception__":
        return CandidateRaised(f"the candidate raised {value[1]}.{value[2]}: {value[3]}"[:1000])
    return CandidateRaised("the candidate raised an exception the harness cannot rebuild")


# -- unittest.mock patches active in the script's process, so the candidate's process sees them too

def _track_patches(host):
    """Wraps unittest.mock's patchers' enter/exit (only if the module is loaded) to know what is patched."""
    mock = sys.modules.get("unittest.mock")
    if mock is None or getattr(mock._patch, "_repost_tracked", False):
        if mock is not None:
            mock._patch._repost_host = host
        return
    enter, exit_ = mock._patch.__enter__, mock._patch.__exit__

    def __enter__(self):
        value = enter(self)
        tracker = getattr(mock._patch, "_repost_host", None)
        if tracker is not None:
            tracker.patches.append(self)
        return value

    def __exit__(self, *exc_info):
        tracker = getattr(mock._patch, "_repost_host", None)
        if tracker is not None and self in tracker.patches:
            tracker.patches.remove(self)
        return exit_(self, *exc_info)

    mock._patch.__enter__, mock._patch.__exit__ = __enter__, __exit__
    mock._patch._repost_tracked = True
    mock._patch._repost_host = host


def _patch_spec(patcher):
    """(where, attribute, current value) of one active patch, where being a module name or a class's path."""
    try:
        target = patcher.getter()
        attribute = patcher.attribute
        value = getattr(target, attribute)
    except Exception:  # noqa: BLE001
        return None
    if isinstance(target, types.ModuleType):
        return ("module", target.__name__, attribute, value)
    if isinstance(target, type) and "<locals>" not in target.__qualname__:
        return ("class", target.__module__, target.__qualname__, attribute, value, isinstance(value, types.FunctionType))
    return None


# ----------------------------------------------------------------------------- candidate side

class _Ref:
    """In the candidate's process: an object that stays in the trusted one."""

    __slots__ = ("_repost_conn", "_repost_id")

    def __init__(self, conn, ref):
        object.__setattr__(self, "_repost_conn", conn)
        object.__setattr__(self, "_repost_id", ref)

    def __call__(self, *args, **kwargs):
        return self._repost_conn.op(self._repost_id, "call", args, kwargs)

    def __getattr__(self, name):
        return self._repost_conn.op(self._repost_id, "getattr", (name,), {})

    def __setattr__(self, name, value):
        raise AttributeError("an object of the trusted process cannot be changed from the candidate's")

    def __reduce_ex__(self, protocol):
        raise pickle.PicklingError("a reference is sent by its id")


def _forward(name):
    def method(self, *args, **kwargs):
        return self._repost_conn.op(self._repost_id, name, args, kwargs)

    method.__name__ = name
    return method


for _name in _FORWARDED_DUNDERS:
    setattr(_Ref, _name, _forward(_name))


def _as_method(ref):
    """A function of the trusted process set on a class: a real function here, so instances bind it as Python would."""

    def method(*args, **kwargs):
        return ref(*args, **kwargs)

    return method


class _CandidatePickler(pickle.Pickler):
    def __init__(self, buf, back=None):
        super().__init__(buf, protocol=5)
        self.back = back or {}

    def persistent_id(self, obj):
        if type(obj) in _ATOMS:
            return None
        if type(obj) is _Ref:
            return ("ref", object.__getattribute__(obj, "_repost_id"))
        index = self.back.get(id(obj))
        return None if index is None else ("back", index)


class _CandidateUnpickler(pickle.Unpickler):
    def __init__(self, data, conn):
        super().__init__(io.BytesIO(data))
        self.conn = conn

    def persistent_load(self, pid):
        if pid[0] == "ref":
            return _Ref(self.conn, pid[1])
        if pid[0] == "module":
            import importlib

            return importlib.import_module(pid[1])
        raise pickle.UnpicklingError("unknown reference")


class _Conn:
    def __init__(self, fds, server):
        (self.rfd, self.fd), self.server = fds, server

    def dumps(self, obj, back=None):
        buf = io.BytesIO()
        _CandidatePickler(buf, back).dump(obj)
        return buf.getvalue()

    def send(self, message):
        send_bytes(self.fd, self.dumps(message))

    def receive(self):
        data = recv_bytes(self.rfd)
        if data is None:
            os._exit(0)  # the trusted side is gone: nothing is left to do
        if self.server.main is None:
            # The module loads at the first call (its classes are what the call's values are made of),
            # after the script's own top level ran: what both write to the shared folders is not raced.
            self.server.load()
        try:
            message = _CandidateUnpickler(data, self).load()
        except Exception as exc:  # noqa: BLE001 - e.g. a class the module never got to define
            cause = self.server.load_error or exc
            send_bytes(self.fd, self.dumps(("raise", _portable_exception(cause), {}, ("", ""), None)))
            return None
        if isinstance(message, tuple) and len(message) == 3 and message[0] == "shared":
            _, message, shared = message
            message = message + (shared,)
        return message

    def op(self, ref, name, args, kwargs):
        self.send(("op", ref, name, args, kwargs))
        while True:
            message = self.receive()
            if message[0] == "ok":
                return message[1]
            if message[0] == "err":
                raise _rebuilt_exception(message[1])
            self.server.handle(message)


class _Server:
    def __init__(self, fd, module_source, target, kind, module_path, run_dir=None):
        self.conn = _Conn(fd, self)
        self.source, self.target, self.kind, self.path = module_source, target, kind, module_path
        self.run_dir = run_dir
        self.main = None
        self.load_error = None
        self.generators = {}
        self.functions = {}
        self.applied = []

    def load(self):
        if self.run_dir is not None:
            # Where the script's own top level ran: what the module's reads with relative paths find.
            try:
                os.chdir(self.run_dir)
            except OSError:
                pass
        main = types.ModuleType("__main__")
        main.__file__ = self.path
        main.__loader__ = SourceLoader(self.source)
        main.__builtins__ = __builtins__
        sys.modules["__main__"] = main
        # The trusted side may run the script as a module of another name (the test runner's).
        sys.modules["repost_candidate_module"] = main
        self.main = main
        try:
            exec(compile(self.source, self.path, "exec"), main.__dict__)
            top = self.target.split(".")[0]
            if top in main.__dict__:
                main.__dict__.setdefault(top + NEW_SUFFIX, main.__dict__[top])
        except BaseException as exc:  # noqa: BLE001 - every call then raises it
            self.load_error = exc

    def _apply(self, env):
        import importlib

        if isinstance(env.get("plain"), bytes):
            env = {**pickle.loads(env["plain"]), **env}
        if "environ" in env and isinstance(env["environ"], dict):
            os.environ.clear()
            os.environ.update(env["environ"])
        cwd = env.get("cwd")
        if isinstance(cwd, str):
            try:
                os.chdir(cwd)
            except OSError:
                pass
        if "random" in env:
            import random

            random.setstate(env["random"])
        if "np_random" in env and "numpy" in sys.modules:
            sys.modules["numpy"].random.set_state(env["np_random"])
        applied = []
        for spec in env.get("patches", ()):
            try:
                if spec[0] == "module":
                    owner = importlib.import_module(spec[1])
                    attribute, value = spec[2], spec[3]
                else:
                    owner = importlib.import_module(spec[1])
                    for part in spec[2].split("."):
                        owner = getattr(owner, part)
                    attribute, value = spec[3], spec[4]
                    if len(spec) > 5 and spec[5] and type(value) is _Ref:
                        value = _as_method(value)
                had = attribute in vars(owner)
                applied.append((owner, attribute, had, vars(owner).get(attribute)))
                setattr(owner, attribute, value)
            except Exception:  # noqa: BLE001 - a patch of something this process does not have
                continue
        for name, value in (env.get("globals") or {}).items():
            had = name in self.main.__dict__
            applied.append((self.main, name, had, self.main.__dict__.get(name)))
            setattr(self.main, name, value)
        self.applied = applied

    def _restore(self):
        for owner, attribute, had, old in reversed(self.applied):
            try:
                if had:
                    setattr(owner, attribute, old)
                else:
                    delattr(owner, attribute)
            except Exception:  # noqa: BLE001
                pass
        self.applied = []

    def _states(self):
        env = {}
        rnd = sys.modules.get("random")
        if rnd is not None:
            env["random"] = rnd.getstate()
        np = sys.modules.get("numpy")
        if np is not None:
            try:
                env["np_random"] = np.random.get_state()
            except Exception:  # noqa: BLE001
                pass
        # Builtin values and NumPy's state: the C pickler alone, no per-object hook.
        return pickle.dumps(env, protocol=5)

    def _value(self, value):
        if isinstance(value, types.GeneratorType):
            gen_id = len(self.generators) + 1
            self.generators[gen_id] = value
            return ("__repost_generator__", gen_id)
        if isinstance(value, (types.FunctionType, types.MethodType, types.BuiltinFunctionType)) or type(value).__name__ == "partial":
            fn_id = len(self.functions) + 1
            self.functions[fn_id] = value
            return ("__repost_function__", fn_id)
        return value

    def _captured(self, fn):
        out, err = io.StringIO(), io.StringIO()
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        try:
            return fn()
        finally:
            sys.stdout, sys.stderr = saved
            self._output = (out.getvalue(), err.getvalue())

    def handle(self, message):
        if message is None:
            return
        tag = message[0]
        if tag in ("call", "invoke"):
            self._call(*message[1:])
        elif tag == "next":
            self._next(message[1], message[2])
        else:
            raise SystemExit(3)

    def _call(self, name, self_obj, args, kwargs, env, shared=()):
        self._output = ("", "")
        self._apply(env)
        try:
            def run():
                if self.load_error is not None:
                    raise self.load_error
                if isinstance(name, int):
                    return self.functions[name](*args, **kwargs)
                if self.kind == "class" and name == "__new__":
                    return self.main.__dict__[self.target](*args, **kwargs)
                if self.kind == "class" and name == "__dunders__":
                    cls = self.main.__dict__[self.target]
                    return sorted({n for klass in cls.__mro__[:-1] for n, v in vars(klass).items() if n.startswith("__") and n.endswith("__") and callable(v)})
                parts = name.split(".")
                if self_obj is not None:
                    member = getattr(self_obj, parts[-1])
                else:
                    member = self.main.__dict__[parts[0]]
                    for part in parts[1:]:
                        member = getattr(member, part)
                if args is None:
                    # An attribute read: a method of the object is called later, through the object.
                    if isinstance(member, types.MethodType) and member.__self__ is self_obj:
                        return ("__repost_method__",)
                    return member
                return member(*args, **kwargs)

            value = self._captured(run)
            tag = "return"
        except BaseException as exc:  # noqa: BLE001 - goes back as the call's exception
            value, tag = exc, "raise"
        finally:
            self._restore()
        self._reply(tag, value, shared)

    def _reply(self, tag, value, shared):
        """The call's outcome, the objects it was given as they are now (each by its index: the trusted
        side writes their state into its own), the random states and the output."""
        states, output = self._states(), self._output
        if tag == "raise":
            if isinstance(value, (SystemExit, KeyboardInterrupt)):
                self.conn.send(("ended", f"the candidate raised {type(value).__name__}"))
                return
            value = _portable_exception(value)
        else:
            value = self._value(value)
        back = {id(o): i for i, o in enumerate(shared)}
        try:
            data = self.conn.dumps((tag, value, states, output, [_state_of(o) for o in shared]), back)
        except Exception as exc:  # noqa: BLE001 - the result does not pickle
            data = self.conn.dumps(("raise", ("__repost_exception__", "builtins", "TypeError", f"the candidate's result cannot be sent by value: {type(exc).__name__}: {exc}"), states, output, None))
        send_bytes(self.conn.fd, data)

    def _next(self, gen_id, env):
        gen = self.generators.get(gen_id)
        self._output = ("", "")
        self._apply(env)
        try:
            value = self._captured(lambda: next(gen))
            tag = "yield"
        except StopIteration:
            tag, value = "stop", None
        except BaseException as exc:  # noqa: BLE001
            tag, value = "raise", exc
        finally:
            self._restore()
        states, output = self._states(), self._output
        if tag == "yield":
            self.conn.send(("yield", self._value(value), states, output))
        elif tag == "stop":
            self.conn.send(("stop", states, output))
        elif isinstance(value, (SystemExit, KeyboardInterrupt)):
            self.conn.send(("ended", "the candidate raised SystemExit"))
        else:
            self.conn.send(("raise", _portable_exception(value), states, output))

    def serve(self):
        while True:
            self.handle(self.conn.receive())


class SourceLoader:
    """A module's source kept in memory: tracebacks read their lines from it when they print
    (linecache asks a module's `__loader__`), so nothing is imported for them before."""

    def __init__(self, source):
        self.source = source

    def get_source(self, name):
        return self.source


def top_level_imports(source):
    """The modules a source imports on its lines that start at column 0 (`import a.b, c`, `from a import b`), read cheaply."""
    names = []
    for line in source.splitlines():
        if line.startswith("import "):
            names += [part.split(" as ")[0].strip() for part in line[7:].split("#")[0].split(",")]
        elif line.startswith("from ") and " import " in line and not line.startswith("from ."):
            names.append(line[5:].split(" import ")[0].strip())
    return [n for n in names if n and all(p.isidentifier() for p in n.split("."))]


def serve(fds, candidate, module_path, run_dir=None):
    """The candidate process's main loop (never returns)."""
    # Imports of the module's own top level, ahead of the first call: packages only, no script code.
    for name in top_level_imports(candidate["module"]):
        try:
            __import__(name)
        except BaseException:  # noqa: BLE001 - the module's own load will say so
            pass
    server = _Server(fds, candidate["module"], candidate["target"], candidate["kind"], module_path, run_dir)
    try:
        server.serve()
    except BaseException:  # noqa: BLE001 - the harness's own fault: said on stderr, the trusted side sees the channel close
        import traceback

        print("[repost-sandbox] the candidate's side of the harness failed:", file=sys.stderr)
        traceback.print_exc()
        sys.stderr.flush()
    finally:
        os._exit(0)
