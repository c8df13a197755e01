"""Keeps a warm container clean between runs; used by launch.py at both ends of every run.

Every process a script can start runs under the scripts' uid, so `kill(-1, SIGKILL)` from that
uid reaches all of them and nothing else (PID 1 runs under another uid); from the supervisor
(root in the container, with CAP_KILL) it reaches every process but PID 1 and itself. The
writable places are small tmpfs mounts that are emptied whole, by the scripts' uid (the
supervisor has no right to read them). A container found dirty (a process that survives, a file
that cannot be removed, an OOM kill in its history) is reported so the pool replaces it.
"""
import os
import time

SIGKILL = 9  # the `signal` module would pull in `enum`; this runs before every script

WRITABLE = ["/scratch", "/tmp", "/dev/shm", "/home/user"]


def _own_processes():
    """Live processes `kill(-1)` from this one reaches: of its uid, or (root) all but PID 1."""
    me, uid = os.getpid(), os.getuid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in (me, 1):
            continue
        try:
            with open(f"/proc/{entry}/status") as fh:
                fields = dict(line.split(":", 1) for line in fh if ":" in line)
        except OSError:
            continue
        if (uid == 0 or int(fields["Uid"].split()[1]) == uid) and not fields["State"].strip().startswith("Z"):
            found.append(int(entry))
    return found


def kill_others():
    """Kills every other process this one may signal (see _own_processes); returns how many survived."""
    left = _own_processes()
    for _ in range(20):
        if not left:
            return 0
        try:
            os.kill(-1, SIGKILL)
        except ProcessLookupError:
            pass
        time.sleep(0.005)
        left = _own_processes()
    return len(left)


def _remove_tree(path):
    """shutil.rmtree without importing shutil (this runs before every script)."""
    for dirpath, dirnames, filenames in os.walk(path, topdown=False):
        for name in filenames:
            os.unlink(os.path.join(dirpath, name))
        for name in dirnames:
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                os.unlink(full)
            else:
                os.rmdir(full)
    os.rmdir(path)


def wipe(keep=()):
    """Empties the writable mounts (except the paths in `keep`); returns what could not be removed."""
    remaining = []
    for root in WRITABLE:
        if not os.path.isdir(root):
            continue
        for name in os.listdir(root):
            path = os.path.join(root, name)
            if path in keep:
                continue
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    _remove_tree(path)
                else:
                    os.unlink(path)
            except OSError:
                pass
            if os.path.lexists(path):
                remaining.append(path)
    return remaining


def oom_kills():
    """The container's OOM-kill counter (cgroup v1 or v2)."""
    for path in ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"):
        try:
            with open(path) as fh:
                for line in fh:
                    name, _, value = line.partition(" ")
                    if name == "oom_kill":
                        return int(value)
        except OSError:
            continue
    return 0


def make_clean():
    """Before a run: returns the reasons the container is not clean (empty list: clean)."""
    reasons = []
    survivors = kill_others()
    if survivors:
        reasons.append(f"{survivors} processes of an earlier run survived SIGKILL")
    left = wipe()
    if left:
        reasons.append(f"cannot remove {', '.join(left[:5])}")
    if oom_kills() > 0:
        reasons.append("the memory limit was hit (OOM kill) in this container earlier")
    return reasons
