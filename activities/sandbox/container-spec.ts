/**
 * How a sandbox container is made: the limits and the isolation every run gets, and the labels
 * that let a restarted worker find and remove what a crashed one left behind.
 */
import * as os from 'node:os';
import type Docker from 'dockerode';
import type { Config } from '../../temporal.config';

export type SandboxLimits = Pick<Config['sandbox'], 'memoryMb' | 'cpus' | 'pidsLimit' | 'scratchMb'>;

/** The uid scripts run as (the image's `sandbox` user) and the uid of PID 1 (the reaper). */
export const SCRIPT_USER = '10001:10001';
export const INIT_USER = '10002:10002';
/**
 * The harness's supervisor (launch.py) in a run container: root inside it, with no capability but
 * SUPERVISOR_CAPABILITIES, so a script (another uid) can neither signal nor trace it; it forks the
 * script as SCRIPT_USER with an empty bounding set.
 */
export const SUPERVISOR_USER = '0:0';
export const SUPERVISOR_CAPABILITIES = ['KILL', 'SETUID', 'SETGID', 'SETPCAP'];
/** The supervisor's own tmpfs (mode 0700, root): its results, out of the script's reach. */
export const RESULT_DIR = '/run/repost';
export const HARNESS_DIR = '/opt/repost/harness';
/** The package store's environments (one folder per requirement set), mounted read-only. */
export const PACKAGES_MOUNT = '/opt/repost/package-cache';
/** Packages baked into a dataset image (`scripts/sandbox.ts image`); the image's PYTHONPATH. */
export const BAKED_PACKAGES = '/opt/repost/packages';
export const SCRATCH_DIR = '/scratch';
/** RepoST's prompts told the LLM to write files under /home/user/tmp; its records still do. */
export const LEGACY_HOME = '/home/user';

export const LABELS = {
  sandbox: 'dev.repost.sandbox',
  worker: 'dev.repost.sandbox.worker',
  /** Identifies one worker process (host, pid, start time), so leftovers of dead ones are told apart. */
  process: 'dev.repost.sandbox.process',
  role: 'dev.repost.sandbox.role',
} as const;

export type ContainerRole = 'pool' | 'cold' | 'build' | 'baseline';

/** This process's identity, stamped on every container it creates. */
export const PROCESS_TOKEN = `${os.hostname()}:${process.pid}:${Date.now()}`;

export function sandboxLabels(workerId: string, role: ContainerRole): Record<string, string> {
  return { [LABELS.sandbox]: '1', [LABELS.worker]: workerId, [LABELS.process]: PROCESS_TOKEN, [LABELS.role]: role };
}

const MiB = 1024 * 1024;

/**
 * The isolation every sandbox container gets: no network, memory without swap, CPU and process
 * caps, read-only root, every capability dropped, no privilege gain, and the only writable places
 * are small tmpfs mounts (and, for a source build, its output folder).
 */
function isolatedHostConfig(limits: SandboxLimits, binds: string[]): Docker.HostConfig {
  const tmpfs = (extra: string) => `rw,nosuid,nodev,size=${limits.scratchMb}m,${extra}`;
  return {
    NetworkMode: 'none',
    Memory: limits.memoryMb * MiB,
    MemorySwap: limits.memoryMb * MiB,
    NanoCpus: Math.round(limits.cpus * 1e9),
    PidsLimit: limits.pidsLimit,
    ReadonlyRootfs: true,
    CapDrop: ['ALL'],
    SecurityOpt: ['no-new-privileges'],
    Tmpfs: {
      // 0710: the scripts' group (an isolated run's candidate, whose uid is another) may pass
      // through to the run's folder, where the tests' files are, but never list what is here.
      [SCRATCH_DIR]: tmpfs('uid=10001,gid=10001,mode=0710'),
      '/tmp': tmpfs('mode=1777'),
      [LEGACY_HOME]: tmpfs('uid=10001,gid=10001,mode=0755'),
    },
    ShmSize: 64 * MiB,
    IpcMode: 'private',
    Binds: binds,
    Ulimits: [{ Name: 'nofile', Soft: 4096, Hard: 4096 }],
    LogConfig: { Type: 'none', Config: {} },
  };
}

/**
 * A container that idles under a reaper as PID 1 (started as root, it drops to INIT_USER at once);
 * runs happen through `exec` of the supervisor as SUPERVISOR_USER, which runs the script as
 * SCRIPT_USER. Only these containers get the supervisor's capabilities.
 */
export function runContainerOptions(args: {
  image: string;
  limits: SandboxLimits;
  /** The package store's environments folder, mounted read-only. */
  envsDir: string;
  workerId: string;
  role: ContainerRole;
}): Docker.ContainerCreateOptions {
  const host = isolatedHostConfig(args.limits, [`${args.envsDir}:${PACKAGES_MOUNT}:ro`]);
  return {
    Image: args.image,
    Cmd: ['python3', `${HARNESS_DIR}/init.py`],
    User: SUPERVISOR_USER,
    WorkingDir: SCRATCH_DIR,
    Labels: sandboxLabels(args.workerId, args.role),
    NetworkDisabled: true,
    HostConfig: {
      ...host,
      CapAdd: [...SUPERVISOR_CAPABILITIES],
      Tmpfs: { ...host.Tmpfs, [RESULT_DIR]: `rw,nosuid,nodev,noexec,size=${args.limits.scratchMb}m,mode=0700` },
    },
  };
}

/** Where a source build finds its archive and leaves its wheel. */
export const BUILD_SOURCE_DIR = '/opt/repost/build-source';
export const BUILD_OUTPUT_DIR = '/opt/repost/build-output';

/**
 * The container a source build runs in, offline: idle under the reaper (which ends the container
 * after `lifetimeSec`, even if the worker that started it is gone), the archive and the build
 * requirements (an environment of the store) read-only. The build runs through `exec` as the
 * scripts' user, and its only writable places are tmpfs mounts: the wheel goes to a tmpfs of
 * `scratchMb` at BUILD_OUTPUT_DIR, read back through `exec` (see source-build.ts), so nothing the
 * build makes is ever a file on the host.
 */
export function sourceBuildContainerOptions(args: {
  image: string;
  limits: SandboxLimits;
  envsDir: string;
  workerId: string;
  sourceDir: string;
  lifetimeSec: number;
}): Docker.ContainerCreateOptions {
  const host = isolatedHostConfig(args.limits, [`${args.envsDir}:${PACKAGES_MOUNT}:ro`, `${args.sourceDir}:${BUILD_SOURCE_DIR}:ro`]);
  return {
    Image: args.image,
    Cmd: ['python3', `${HARNESS_DIR}/init.py`, String(Math.max(1, Math.ceil(args.lifetimeSec)))],
    User: INIT_USER,
    WorkingDir: SCRATCH_DIR,
    Labels: sandboxLabels(args.workerId, 'build'),
    NetworkDisabled: true,
    HostConfig: {
      ...host,
      Tmpfs: { ...host.Tmpfs, [BUILD_OUTPUT_DIR]: `rw,nosuid,nodev,noexec,size=${args.limits.scratchMb}m,uid=10001,gid=10001,mode=0700` },
    },
  };
}

/**
 * A one-shot container that runs the harness's own code (byte-compiling package sources, no
 * package code) offline: the inputs and the environments are read-only, only the output folder is
 * writable, and it runs as the scripts' user with the same limits as a script.
 */
export function buildContainerOptions(args: {
  image: string;
  limits: SandboxLimits;
  envsDir: string;
  workerId: string;
  sourceDir: string;
  outputDir: string;
  cmd: string[];
  env: string[];
  /** Killed inside the container after this long, even if the worker that started it is gone. */
  timeoutSec: number;
}): Docker.ContainerCreateOptions {
  return {
    Image: args.image,
    Cmd: ['timeout', '-s', 'KILL', String(Math.max(1, Math.ceil(args.timeoutSec))), ...args.cmd],
    Env: args.env,
    User: SCRIPT_USER,
    WorkingDir: SCRATCH_DIR,
    Labels: sandboxLabels(args.workerId, 'build'),
    NetworkDisabled: true,
    HostConfig: {
      ...isolatedHostConfig(args.limits, [
        `${args.envsDir}:${PACKAGES_MOUNT}:ro`,
        `${args.sourceDir}:${BUILD_SOURCE_DIR}:ro`,
        `${args.outputDir}:${BUILD_OUTPUT_DIR}:rw`,
      ]),
      // Build logs are read back from the engine.
      LogConfig: { Type: 'json-file', Config: { 'max-size': '1m' } },
    },
  };
}
