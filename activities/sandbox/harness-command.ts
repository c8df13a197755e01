/**
 * How a request reaches the harness inside the container: as `docker exec` arguments (one exec,
 * no stdin round trip), or as JSON on stdin when it is too large for a command line.
 */
import type { BoundedOutput } from './bounded-output';
import { HARNESS_DIR, RESULT_DIR } from './container-spec';

/** launch.py's exit status when it found its container unclean (before running anything). */
export const DIRTY_EXIT = 199;
/** launch.py's exit status when its own time limit ended the script (confirmed by `timedOut` in its result). */
export const HARNESS_TIMEOUT_EXIT = 124;
/** launch.py's exit status when the supervisor itself failed (an exception of its own): the run has no verdict, its container is not lent again. */
export const HARNESS_FAILED_EXIT = 198;
/** launch.py's exit status when the process ended 0 but the supervisor cannot confirm a pass (its result's `verdict` says why). */
export const HARNESS_UNCONFIRMED_EXIT = 125;
/**
 * Where launch.py leaves a run's result, written after every other process in the container is
 * gone: in the supervisor's own folder, which the script can neither read nor write.
 */
export function harnessResultPath(runDir: string): string {
  return `${RESULT_DIR}/${runDir.split('/').pop()}.json`;
}
export const DIRTY_MARKER = '[repost-sandbox] container not clean:';

/**
 * The supervisor ends its run's stdout with its result (the same JSON as the file above), written
 * after every other process in the container is gone, so nothing the script printed can follow
 * it: a newline, the JSON, a newline, then this marker and the JSON's length in bytes and a
 * newline. Read from the end, by that length, it cannot be confused with anything the script wrote
 * before it (a forged trailer the script printed is inside what precedes the real one). It saves a
 * second `docker exec` to read the file after each run that needs a result.
 */
export const RESULT_TRAILER_MARKER = '\x1e[repost-result] ';
const TRAILER_LINE = /\n\x1e\[repost-result\] (\d{1,10})\n$/;

/**
 * Takes the supervisor's result off the end of a run's stdout, leaving stdout as the script wrote
 * it. Null (and stdout untouched) when the stream does not end with the trailer, or when not all
 * of it was kept (output past the capture's budget): the caller then reads the result file.
 */
export function takeResultTrailer(stdout: BoundedOutput): string | null {
  const end = stdout.lastBytes(Math.min(stdout.totalBytes, 40));
  const line = end && TRAILER_LINE.exec(end.toString('latin1'));
  if (!line) return null;
  const length = Number(line[1]);
  const whole = stdout.lastBytes(1 + length + line[0].length);
  if (!whole || whole[0] !== 0x0a) return null;
  stdout.dropLast(whole.length);
  return whole.subarray(1, 1 + length).toString('utf8');
}
/** Requests up to this size travel as command-line arguments (one `exec`, no stdin round trip). */
const ARGV_PAYLOAD_LIMIT = 1024 * 1024;
/** UTF-16 units per argument: at most 3 UTF-8 bytes each, under Linux's 128 KiB for one argument. */
const ARGV_CHUNK = 32 * 1024;

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
  /** Run the harness's test runner on the script instead of running it as `__main__`. */
  runner?: RunnerSpec | null;
  /** Mutation testing: the script, then each mutant of `target`, in forks of one warm parent (see repost_mutation_run.py). */
  mutation?: MutationSpec | null;
  /** The run's PYTHONHASHSEED (the supervisor starts again with it before anything runs). */
  hashSeed?: number | null;
  /** The script's wall clock (`time`, `datetime`) shifted by this many seconds (see repost_clock.py). */
  clockOffsetSec?: number | null;
  /** An isolated run: the candidate in a process of its own (see repost_isolated.py). */
  candidate?: CandidateSpec | null;
  /** The supervisor ends the exec's stdout with its result (see takeResultTrailer); other callers of launch.py read the file. */
  resultTrailer?: boolean;
}

/**
 * An isolated run's candidate (repost_isolated.py): the module its process loads (the script's
 * definitions with the target replaced by the candidate, no test, no original), and which name in
 * it the script's `<name>_new_implementation` calls. It may travel on the command line like any
 * request: the supervisor blanks its arguments before it forks anything (repost_hygiene.hide_request)
 * and refuses an isolated run when it cannot, and no other process is left in the container when
 * a run starts, so no process of the candidate ever reads the ground truth there.
 */
export interface CandidateSpec {
  target: string;
  kind: 'function' | 'class';
  module: string;
}

/** A mutation run (repost_mutation_run.py): which function's body is mutated, how many mutants, their limits. */
export interface MutationSpec {
  /** The placed copy: `name_new_implementation` or `Class.name_new_implementation`. */
  target: string;
  /** At most this many mutants, sampled with `seed`. */
  cap: number;
  seed: number;
  /** Each mutant's time limit; null: 2 s plus 10 times the ground truth's time in the same run, at most the run's limit. */
  mutantTimeoutSec: number | null;
  /** No mutant is started once the run has taken this long. */
  budgetSec: number;
  /** A measurement: sample as if no mutant were left out and run the left-out ones too, tagged (never scored). */
  keepLeftOut?: boolean;
}

/**
 * How long a mutation run may take before the executor removes its container (the supervisor
 * stops on its own well before): making the mutants, starting a warm parent and the ground truth
 * (twice when it must run without the warm parent's imports) take at most the run's limit each,
 * the mutants stop at the budget, and the last job may take one more limit.
 */
export function mutationRunDeadlineSec(timeoutSec: number, spec: Pick<MutationSpec, 'budgetSec'>): number {
  return Math.max(spec.budgetSec, 5 * timeoutSec) + timeoutSec;
}

/** A test-runner run: snippets against the script loaded as a module (see repost_test_runner.py). */
export interface RunnerSpec {
  mode: 'matrix' | 'outputs';
  /** `name` or `Class.method`. */
  target: string;
  snippets: readonly string[];
  /** Each snippet's own limit. */
  timeoutSec: number;
}

/** The harness's JSON helpers, run by launch.py after the same cleaning as a script. */
export type HarnessHelper = 'imports.py' | 'ast_equiv.py' | 'ast_normalize.py';

/** launch.py running a JSON helper instead of a script: its answer is the exec's stdout. */
export function helperCommand(helper: HarnessHelper, input: unknown, timeoutSec: number): { cmd: string[]; stdin?: Buffer } {
  return encodeLaunch([
    ['helper', helper],
    ['input', JSON.stringify(input)],
    ['timeoutSec', String(timeoutSec)],
  ], () => ({ helper, input: JSON.stringify(input), timeoutSec }));
}

/**
 * The launcher's command line: `name count part...` fields (no JSON to decode, which would cost
 * the launcher an import on every run); JSON on stdin when too large or holding NUL characters,
 * and always for a mutation run: a process's command line is readable by every process in the
 * container, and a mutant's job comparing its own script with the one on its warm parent's
 * command line (the supervisor's, inherited) would know it is a mutant.
 */
export function launchCommand(request: LaunchRequest): { cmd: string[]; stdin?: Buffer } {
  const fields: [string, string][] = [
    ['runDir', request.runDir],
    ['script', request.script],
    ...Object.entries(request.files).map(([name, text]): [string, string] => [`file:${name}`, text]),
  ];
  if (request.coverage) fields.push(['coverage', request.coverage]);
  if (request.packageDir) fields.push(['packageDir', request.packageDir]);
  if (request.runner) fields.push(['runner', JSON.stringify(request.runner)]);
  if (request.candidate) fields.push(['candidate', JSON.stringify(request.candidate)]);
  if (request.mutation) fields.push(['mutation', JSON.stringify(request.mutation)]);
  if (request.hashSeed !== undefined && request.hashSeed !== null) fields.push(['hashSeed', String(request.hashSeed)]);
  if (request.clockOffsetSec !== undefined && request.clockOffsetSec !== null) fields.push(['clockOffsetSec', String(request.clockOffsetSec)]);
  if (request.resultTrailer) fields.push(['resultTrailer', '1']);
  fields.push(['timeoutSec', String(request.timeoutSec)]);
  return encodeLaunch(fields, () => ({
    resultTrailer: Boolean(request.resultTrailer),
    candidate: request.candidate ?? null,
    runDir: request.runDir,
    script: request.script,
    files: request.files,
    coverage: request.coverage ? { functionName: request.coverage } : null,
    packageDir: request.packageDir,
    runner: request.runner ?? null,
    mutation: request.mutation ?? null,
    hashSeed: request.hashSeed ?? null,
    clockOffsetSec: request.clockOffsetSec ?? null,
    timeoutSec: request.timeoutSec,
  }), Boolean(request.mutation));
}

function encodeLaunch(fields: [string, string][], asJson: () => unknown, viaStdin = false): { cmd: string[]; stdin?: Buffer } {
  const size = fields.reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
  if (viaStdin || size > ARGV_PAYLOAD_LIMIT || fields.some(([k, v]) => k.includes('\0') || v.includes('\0'))) {
    return { cmd: ['python3', '-I', `${HARNESS_DIR}/launch.py`, '-'], stdin: Buffer.from(JSON.stringify(asJson())) };
  }
  const args = fields.flatMap(([k, v]) => {
    const parts = v === '' ? [''] : chunk(v);
    return [k, String(parts.length), ...parts];
  });
  return { cmd: ['python3', '-I', `${HARNESS_DIR}/launch.py`, ...args] };
}
