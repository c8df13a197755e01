/**
 * Kernel state a run leaves behind: System V shared memory, semaphore sets and message queues and
 * POSIX message queues outlive the processes that made them, inside the container's own IPC
 * namespace. Through the real warm pool: one run leaves a segment holding a secret (handed to
 * another owner) and a touched segment of 1.6 GB, and the next run in the same container must
 * find none of it and have its memory to itself. And the request of a run (the script, its files;
 * for an evaluation the ground truth beside the candidate) is on no command line a process of the
 * run can read.
 */
import { warmExecutor } from './sandbox-env';

const GB16 = 1600 * 1024 * 1024;

/** Leaves every kind of IPC object behind, one of them with its owner changed to root. */
const LEAVER = `
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
IPC_CREAT, IPC_SET, IPC_STAT = 0o1000, 1, 2

secret = libc.shmget(0x5EC, 4096, IPC_CREAT | 0o666)
at = libc.shmat(secret, None, 0)
ctypes.memmove(at, b"the-secret", 10)
libc.shmdt(at)
# The owner becomes root (the creator stays): only the creator's uid can still remove it.
buf = ctypes.create_string_buffer(512)
assert libc.shmctl(secret, IPC_STAT, buf) == 0
ctypes.memmove(ctypes.addressof(buf) + 4, (0).to_bytes(4, "little"), 4)
assert libc.shmctl(secret, IPC_SET, buf) == 0, ctypes.get_errno()

big = libc.shmget(0xB16, ${GB16}, IPC_CREAT | 0o600)
at = libc.shmat(big, None, 0)
ctypes.memset(at, 1, ${GB16})  # touched: charged to the container's memory while it exists
libc.shmdt(at)
assert libc.semget(0x5E3, 4, IPC_CREAT | 0o666) >= 0
assert libc.msgget(0x3E6, IPC_CREAT | 0o666) >= 0
rt = ctypes.CDLL("librt.so.1", use_errno=True)
assert rt.mq_open(b"/leftover", os.O_CREAT | os.O_RDWR, 0o666, None) >= 0
print(socket.gethostname(), open("/proc/sysvipc/shm").read().count("\\n") - 1, len(os.listdir("/dev/mqueue")))
`;

/** An honest run after it: sees no IPC object, then uses 800 MB (with 1.6 GB still held, past the limit). */
const NEXT = `
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
counts = [open(f"/proc/sysvipc/{k}").read().count("\\n") - 1 for k in ("shm", "sem", "msg")]
found = libc.shmget(0x5EC, 0, 0)
data = bytearray(800 * 1024 * 1024)
for i in range(0, len(data), 4096):
    data[i] = 1
print(socket.gethostname(), counts, len(os.listdir("/dev/mqueue")), "secret" if found >= 0 else "none")
`;

/** Looks for its own source on every command line in the container (readable by any process). */
const READS_COMMAND_LINES = `
import os
found = []
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            line = open(f"/proc/{p}/cmdline", "rb").read()
        except OSError:
            continue
        if b"marker-7f3a-request" in line:
            found.append(p)
print("seen on", len(found), "command lines")
`;

describe('kernel state between runs (warm pool)', () => {
  const workerId = `kernel-state-${process.pid}`;
  const sandbox = warmExecutor(workerId, 'pool', { memoryMb: 2048 });

  test('IPC objects one run leaves are gone before the next run in the same container', async () => {
    const left = await sandbox.executor.run({ script: LEAVER, timeoutSec: 60 });
    expect(left.stderr).toBe('');
    expect(left.status).toBe('passed');
    const [host, shmCount, mqCount] = left.stdout.trim().split(' ');
    expect([shmCount, mqCount]).toEqual(['2', '1']);

    const next = await sandbox.executor.run({ script: NEXT, timeoutSec: 60 });
    expect(next.stderr).toBe('');
    expect(next.status).toBe('passed');
    // The same warm container (not a fresh one after a dirty report), with nothing left in it.
    expect(next.stdout.trim()).toBe(`${host} [0, 0, 0] 0 none`);
  });

  test('no command line in the container shows the run’s request (the script, its files)', async () => {
    const result = await sandbox.executor.run({ script: READS_COMMAND_LINES, files: { 'data.txt': 'marker-7f3a-request' }, timeoutSec: 20 });
    expect(result.status).toBe('passed');
    expect(result.stdout.trim()).toBe('seen on 0 command lines');
  });
});
