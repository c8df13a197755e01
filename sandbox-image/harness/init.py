"""PID 1 of a sandbox container: reaps orphans and otherwise sleeps.

It runs under its own uid (not the scripts' one), so a script can neither signal nor trace it,
and `kill -9 -1` by the scripts' user (how runs are cleaned up) leaves it alone.
"""
import os
import signal

signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
while True:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
    signal.sigtimedwait({signal.SIGCHLD}, 5.0)
