"""Hands a source build's output to the worker without trusting anything the build left there.

Run with `python3 -I` in the build's container, as the scripts' uid, once the build has ended:

    collect_wheel.py list DIR            JSON {"entries": [{"name", "kind", "size"}], "total": n}
    collect_wheel.py read DIR NAME MAX   the bytes of DIR/NAME on stdout

Both first kill every other process of this uid (whatever the build left running), so nothing
changes the folder while it is read. `list` only calls lstat: nothing is followed or opened.
`read` opens the one entry with O_NOFOLLOW and O_NONBLOCK (a symbolic link fails, a FIFO does
not block), checks on the open descriptor that it is a regular file of at most MAX bytes, and
copies at most that many bytes. A refusal exits 3 with the reason on stderr.
"""
import json
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import repost_hygiene as hygiene  # noqa: E402

MAX_LISTED = 1000
REFUSED = 3


def _kind(mode):
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "other"


def _refuse(reason):
    sys.stderr.write(reason + "\n")
    sys.stderr.flush()
    os._exit(REFUSED)


def list_entries(folder):
    names = sorted(os.listdir(folder))
    entries = []
    for name in names[:MAX_LISTED]:
        try:
            st = os.lstat(os.path.join(folder, name))
        except OSError:
            continue
        entries.append({"name": name, "kind": _kind(st.st_mode), "size": st.st_size})
    return {"entries": entries, "total": len(names)}


def read_entry(folder, name, limit):
    if "/" in name or name in ("", ".", ".."):
        _refuse(f"not an entry name: {name!r}")
    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        _refuse(f"{name} cannot be opened as a file: {exc.strerror}")
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        _refuse(f"{name} is a {_kind(st.st_mode)}, not a regular file")
    if st.st_size > limit:
        _refuse(f"{name} is {st.st_size} bytes, more than {limit}")
    left = limit + 1
    out = sys.stdout.buffer
    while left > 0:
        chunk = os.read(fd, min(1 << 20, left))
        if not chunk:
            break
        left -= len(chunk)
        if left <= 0:
            _refuse(f"{name} grew past {limit} bytes while it was read")
        out.write(chunk)
    out.flush()


def main():
    hygiene.kill_others()
    mode, folder = sys.argv[1], sys.argv[2]
    if mode == "list":
        print(json.dumps(list_entries(folder)))
    elif mode == "read":
        read_entry(folder, sys.argv[3], int(sys.argv[4]))
    else:
        _refuse(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
