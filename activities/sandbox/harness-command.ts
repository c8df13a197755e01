/**
 * How a request reaches the harness inside the container: as `docker exec` arguments (one exec,
 * no stdin round trip), or as JSON on stdin when it is too large for a command line.
 */
import { HARNESS_DIR } from './container-spec';

/** launch.py's exit status when it found its container unclean (before running anything). */
export const DIRTY_EXIT = 199;
/** launch.py's exit status when its own time limit ended the script (confirmed by `timedOut` in its result). */
export const HARNESS_TIMEOUT_EXIT = 124;
/** The file launch.py leaves in the run directory, written after every process of the script is gone. */
export const HARNESS_RESULT_FILE = '.repost-result.json';
export const DIRTY_MARKER = '[repost-sandbox] container not clean:';
/** Requests up to this size travel as command-line arguments (one `exec`, no stdin round trip). */
const ARGV_PAYLOAD_LIMIT = 1024 * 1024;
/** UTF-16 units per argument: at most 3 UTF-8 bytes each, under Linux's 128 KiB for one argument. */
const ARGV_CHUNK = 32 * 1024;

/**
 * `python3 -I <harness script> <JSON request>`: as argument chunks, or on stdin if large; killed
 * inside the container after `timeoutSec` whatever happens to the caller.
 */
export function jsonHarnessCommand(script: string, request: unknown, timeoutSec: number): { cmd: string[]; stdin?: Buffer } {
  const json = JSON.stringify(request);
  const base = ['timeout', '-s', 'KILL', String(timeoutSec), 'python3', '-I', `${HARNESS_DIR}/${script}`];
  if (Buffer.byteLength(json) > ARGV_PAYLOAD_LIMIT) return { cmd: [...base, '-'], stdin: Buffer.from(json) };
  return { cmd: [...base, ...chunk(json)] };
}

/** Splits a value into argument-sized parts, never between the two halves of a surrogate pair. */
export function chunk(value: string, size = ARGV_CHUNK): string[] {
  const parts: string[] = [];
  let i = 0;
  while (i < value.length) {
    let end = Math.min(value.length, i + size);
    const code = value.charCodeAt(end - 1);
    if (end < value.length && code >= 0xd800 && code <= 0xdbff) end -= 1;
    parts.push(value.slice(i, end));
    i = end;
  }
  return parts;
}

export interface LaunchRequest {
  runDir: string;
  script: string;
  files: Record<string, string>;
  coverage: string | null;
  packageDir: string | null;
  /** The supervisor in the container ends the script after this long, even if no one is watching. */
  timeoutSec: number;
}

/**
 * The launcher's command line: `name count part...` fields (no JSON to decode, which would cost
 * the launcher an import on every run); JSON on stdin when too large or holding NUL characters.
 */
export function launchCommand(request: LaunchRequest): { cmd: string[]; stdin?: Buffer } {
  const fields: [string, string][] = [
    ['runDir', request.runDir],
    ['script', request.script],
    ...Object.entries(request.files).map(([name, text]): [string, string] => [`file:${name}`, text]),
  ];
  if (request.coverage) fields.push(['coverage', request.coverage]);
  if (request.packageDir) fields.push(['packageDir', request.packageDir]);
  fields.push(['timeoutSec', String(request.timeoutSec)]);
  const size = fields.reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
  if (size > ARGV_PAYLOAD_LIMIT || fields.some(([k, v]) => k.includes('\0') || v.includes('\0'))) {
    const json = {
      runDir: request.runDir,
      script: request.script,
      files: request.files,
      coverage: request.coverage ? { functionName: request.coverage } : null,
      packageDir: request.packageDir,
      timeoutSec: request.timeoutSec,
    };
    return { cmd: ['python3', '-I', `${HARNESS_DIR}/launch.py`, '-'], stdin: Buffer.from(JSON.stringify(json)) };
  }
  const args = fields.flatMap(([k, v]) => {
    const parts = v === '' ? [''] : chunk(v);
    return [k, String(parts.length), ...parts];
  });
  return { cmd: ['python3', '-I', `${HARNESS_DIR}/launch.py`, ...args] };
}
