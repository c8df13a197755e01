"""Keeps a warm container clean between runs; used by launch.py at both ends of every run.

Every process a script can start runs under the scripts' uid, so `kill(-1, SIGKILL)` from that
uid reaches all of them and nothing else (PID 1 runs under another uid); from the supervisor
(root in the container, with CAP_KILL) it reaches every process but PID 1 and itself. The
writable places are small tmpfs mounts that are emptied whole, by the scripts' uid (the
supervisor has no right to read them). A container found dirty (a process that survives, a file
that cannot be removed, an OOM kill in its history) is reported so the pool replaces it.

Kernel objects outlive the processes that made them: System V shared memory, semaphore sets and
message queues (listed in /proc/sysvipc, per IPC namespace: the container has its own) and POSIX
message queues (files of /dev/mqueue). Only their owner or creator may remove them (the supervisor
has no CAP_IPC_OWNER), so the supervisor forks a child per uid that owns or created one, which
becomes that uid and removes what it may; what is left makes the container dirty. Without this a
run could leave data (or gigabytes of charged memory) for the next run in the same container.
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


SYSV_TABLES = (("shm", "shmid"), ("sem", "semid"), ("msg", "msqid"))
MQUEUE_DIR = "/dev/mqueue"
IPC_RMID = 0


def ipc_objects():
    """The IPC objects that exist now: [(kind, id or name, owner uid, creator uid)]."""
    found = []
    for kind, id_column in SYSV_TABLES:
        try:
            with open(f"/proc/sysvipc/{kind}") as fh:
                lines = fh.read().splitlines()
        except OSError:
            continue
        if len(lines) < 2:
            continue
        header = lines[0].split()
        at = {name: header.index(name) for name in (id_column, "uid", "cuid")}
        for line in lines[1:]:
            cells = line.split()
            if len(cells) == len(header):
                found.append((kind, int(cells[at[id_column]]), int(cells[at["uid"]]), int(cells[at["cuid"]])))
    try:
        names = os.listdir(MQUEUE_DIR)
    except OSError:
        names = []
    for name in names:
        try:
            uid = os.lstat(os.path.join(MQUEUE_DIR, name)).st_uid
        except OSError:
            continue
        found.append(("mqueue", name, uid, uid))
    return found


def _remove_ipc(objects):
    """Removes the objects this process's uid owns or created (the kernel refuses the others)."""
    uid = os.getuid()
    mine = [o for o in objects if uid in (o[2], o[3])]
    if not mine:
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for kind, ident, _, _ in mine:
        if kind == "shm":
            libc.shmctl(ident, IPC_RMID, None)
        elif kind == "sem":
            libc.semctl(ident, 0, IPC_RMID)
        elif kind == "msg":
            libc.msgctl(ident, IPC_RMID, None)
        else:
            try:
                os.unlink(os.path.join(MQUEUE_DIR, ident))
            except OSError:
                pass


def _describe(objects):
    return ", ".join(f"{kind} {ident} of uid {uid}" for kind, ident, uid, _ in objects[:5])


def clear_ipc():
    """Removes every IPC object; returns the reasons the container is not clean (empty: clean).

    As root (the supervisor, with CAP_SETUID/CAP_SETGID), a child per owning or creating uid
    becomes that uid and removes what it may; as any other uid, what that uid may remove goes.
    Call it when no process of a run is left (a segment still attached is removed only when its
    last user detaches).
    """
    objects = ipc_objects()
    if not objects:
        return []
    if os.getuid() == 0:
        for uid in sorted({o[2] for o in objects} | {o[3] for o in objects}):
            if uid == 0:
                _remove_ipc(objects)
                continue
            pid = os.fork()
            if pid == 0:
                try:
                    os.setgroups([])
                    os.setgid(uid)
                    os.setuid(uid)
                    _remove_ipc(objects)
                finally:
                    os._exit(0)
            os.waitpid(pid, 0)
    else:
        _remove_ipc(objects)
    left = ipc_objects()
    if os.getuid() != 0:
        me = os.getuid()
        left = [o for o in left if me in (o[2], o[3])]
    return [f"cannot remove IPC objects an earlier run left ({_describe(left)})"] if left else []


def hide_request():
    """Blanks this process's arguments after the launcher's own path, in place.

    The request (the script, its files, for an evaluation the ground truth beside the candidate)
    may travel as command-line arguments, and every process in the container can read any
    process's command line (/proc/<pid>/cmdline, unlike its memory or environment). The kernel
    shows the bytes between the stack's arg_start and arg_end (fields 48 and 49 of
    /proc/self/stat), so zeroing them hides the request from every process forked after this call
    (they inherit the blanked copy) and from readers of this one; the interpreter's own copy
    (sys.argv) is untouched. Returns whether it did.
    """
    try:
        with open("/proc/self/stat", "rb") as fh:
            stat = fh.read()
        fields = stat[stat.rindex(b")") + 2 :].split()
        arg_start, arg_end = int(fields[45]), int(fields[46])
    except (OSError, ValueError, IndexError):
        return False
    if arg_end <= arg_start:
        return False
    import ctypes

    args = ctypes.string_at(arg_start, arg_end - arg_start)
    # Kept: the interpreter, its options and the launcher's path (what `ps` shows of a run).
    keep = 0
    for part in args.split(b"\0"):
        keep += len(part) + 1
        if part.endswith(b".py"):
            break
    if keep >= len(args):
        return True
    ctypes.memset(arg_start + keep, 0, len(args) - keep)
    return True


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
