"""Shifts the wall clock a script reads through Python's `time` and `datetime` by a fixed offset.

Used by stability runs (the request's `clockOffsetSec`): the same script run at another apparent
time shows whether its outcome depends on the clock. Applied by the run's child before the script
starts, the same way in every stability run (an offset of 0 included), so the runs differ only by
the offset:

- `time.time`, `time.time_ns`, and `time.localtime`, `gmtime`, `ctime`, `asctime` and `strftime`
  when called without a time;
- `datetime.datetime.now`, `utcnow` and `today`, and `datetime.date.today`: the module's
  `datetime` and `date` become subclasses whose instances are the real types' (their
  constructors return real objects, `isinstance` and `issubclass` answer for the real types).

Not shifted: the monotonic and process clocks (`time.monotonic`, `perf_counter`, `sleep`), file
times, and clocks read by C extensions or other processes (numpy's `datetime64('now')`, `date`).
`type(x) is datetime.datetime` is false for every datetime while the shift is on.
"""
import datetime as _datetime
import time as _time


def shift(offset):
    offset = float(offset)
    offset_ns = round(offset * 1e9)
    real_time, real_time_ns = _time.time, _time.time_ns
    real_localtime, real_gmtime, real_ctime = _time.localtime, _time.gmtime, _time.ctime
    real_asctime, real_strftime = _time.asctime, _time.strftime

    def time():
        return real_time() + offset

    def time_ns():
        return real_time_ns() + offset_ns

    def localtime(secs=None):
        return real_localtime(time() if secs is None else secs)

    def gmtime(secs=None):
        return real_gmtime(time() if secs is None else secs)

    def ctime(secs=None):
        return real_ctime(time() if secs is None else secs)

    def asctime(t=None):
        return real_asctime(real_localtime(time()) if t is None else t)

    def strftime(format, t=None):  # noqa: A002 - the standard library's parameter name
        return real_strftime(format, real_localtime(time()) if t is None else t)

    for function in (time, time_ns, localtime, gmtime, ctime, asctime, strftime):
        function.__module__ = "time"
        setattr(_time, function.__name__, function)

    real_date, real_datetime = _datetime.date, _datetime.datetime

    class _DateType(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, real_date)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, real_date)

    class _DatetimeType(_DateType):
        def __instancecheck__(cls, obj):
            return isinstance(obj, real_datetime)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, real_datetime)

    class date(real_date, metaclass=_DateType):
        def __new__(cls, *args, **kwargs):
            return real_date(*args, **kwargs)

        @classmethod
        def today(cls):
            return real_date.fromtimestamp(time())

    class datetime(real_datetime, metaclass=_DatetimeType):
        def __new__(cls, *args, **kwargs):
            return real_datetime(*args, **kwargs)

        @classmethod
        def now(cls, tz=None):
            return real_datetime.fromtimestamp(time(), tz)

        @classmethod
        def utcnow(cls):
            return real_datetime.utcfromtimestamp(time())

        @classmethod
        def today(cls):
            return real_datetime.fromtimestamp(time())

    import copyreg

    for cls, real in ((date, real_date), (datetime, real_datetime)):
        cls.__module__, cls.__qualname__ = "datetime", cls.__name__
        # Pickled under the name the module now gives the class (a real object loads as a real one).
        copyreg.pickle(real, lambda obj, cls=cls: (cls, obj.__reduce__()[1]))
    _datetime.date, _datetime.datetime = date, datetime
