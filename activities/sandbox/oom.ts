/** Telling the kernel's out-of-memory killer from any other SIGKILL of a run. */
import type Docker from 'dockerode';
import { SCRIPT_USER } from './container-spec';
import { startExec } from './docker-exec';

/** Was the last SIGKILL the kernel's OOM killer? Reads the container's cgroup counter. */
export async function oomKilled(docker: Docker, container: Docker.Container): Promise<boolean> {
  try {
    const handle = await startExec(docker, container, {
      cmd: ['sh', '-c', 'cat /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null || cat /sys/fs/cgroup/memory.events'],
      user: SCRIPT_USER,
      outputLimitBytes: 64 * 1024,
    });
    await handle.done;
    const m = /^oom_kill (\d+)/m.exec(handle.stdout.toString());
    return m !== null && Number(m[1]) > 0;
  } catch {
    return false;
  }
}
