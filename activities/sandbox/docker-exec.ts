/**
 * One `docker exec` with bounded capture: optional stdin (written, then half-closed), stdout and
 * stderr demultiplexed into head+tail buffers, and the exit code read back from the engine.
 * Stopping a runaway exec is the caller's job (it removes the container, which ends the stream).
 */
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { BoundedOutput } from './bounded-output';

export interface ExecOptions {
  cmd: string[];
  user: string;
  env?: string[];
  workingDir?: string;
  stdin?: Buffer;
  outputLimitBytes: number;
}

export interface ExecHandle {
  /** Resolves when the exec's streams end; the exit code is null if the engine has none. */
  done: Promise<{ exitCode: number | null }>;
  stdout: BoundedOutput;
  stderr: BoundedOutput;
  /** Stops reading (used after a timeout or cancellation, once the container is going away). */
  abandon(): void;
}

export async function startExec(docker: Docker, container: Docker.Container, options: ExecOptions): Promise<ExecHandle> {
  const exec = await container.exec({
    Cmd: options.cmd,
    User: options.user,
    Env: options.env,
    WorkingDir: options.workingDir,
    AttachStdin: options.stdin !== undefined,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: options.stdin !== undefined })) as NodeJS.ReadWriteStream & {
    destroy(err?: Error): void;
  };
  const stdout = new BoundedOutput(options.outputLimitBytes);
  const stderr = new BoundedOutput(options.outputLimitBytes);
  const out = new PassThrough();
  const err = new PassThrough();
  out.on('data', (c: Buffer) => stdout.push(c));
  err.on('data', (c: Buffer) => stderr.push(c));
  docker.modem.demuxStream(stream, out, err);

  let settle: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => {
    settle = resolve;
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.on('error', () => resolve());
  });
  if (options.stdin !== undefined) {
    stream.write(options.stdin);
    stream.end();
  }
  const done = ended.then(async () => {
    // The engine may report the exit a moment after the streams close.
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        const info = await exec.inspect();
        if (!info.Running) return { exitCode: info.ExitCode };
      } catch {
        return { exitCode: null };
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    return { exitCode: null };
  });
  return {
    done,
    stdout,
    stderr,
    abandon() {
      settle();
      stream.destroy();
    },
  };
}
