"""PID 1 of a sandbox container: reaps orphans and otherwise sleeps.

It runs under its own uid (not the scripts' one), so a script can neither signal nor trace it,
and `kill -9 -1` by the scripts' user (how runs are cleaned up) leaves it alone. Started as root
(a run container, whose supervisor runs as root through exec), it drops to that uid first.
Given a number of seconds (`init.py 600`), it exits after that long, which ends the container and
everything in it (a source build's container must not outlive its time limit, whatever became of
its worker).
"""
import os
import signal
import sys
import time

INIT_UID = 10002
if os.getuid() == 0:
    os.setgroups([])
    os.setgid(INIT_UID)
    os.setuid(INIT_UID)
signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
deadline = time.monotonic() + float(sys.argv[1]) if len(sys.argv) > 1 else None
while deadline is None or time.monotonic() < deadline:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
    signal.sigtimedwait({signal.SIGCHLD}, 5.0 if deadline is None else max(0.01, min(5.0, deadline - time.monotonic())))
