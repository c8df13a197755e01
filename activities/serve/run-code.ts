/**
 * SandboxFusion's `POST /run_code` for Python: its request read (and bounded), turned into one
 * sandbox run, and the run turned into its response shape, so a client written for SandboxFusion
 * (verl's `reward_model.sandbox_fusion.url`) works unchanged.
 *
 * The code runs as the script of a sandbox run. SandboxFusion feeds `stdin` to the program; the
 * harness gives scripts an empty stdin, so a small runner script sets `sys.stdin` to the request's
 * text and runs the code as `__main__` from its own file. `files` (base64, SandboxFusion's
 * encoding) are written beside it as text. `fetch_files` (plain relative paths, at most
 * MAX_FETCH_FILES) are read after the code ends, however it ends short of killing its process:
 * files under the run's folder only (a symbolic link out of it is not followed), each and all
 * together bounded, returned base64 in `files` as SandboxFusion does, a missing one left out.
 * The runner reads them in the sandbox and sends them after the code's own output, behind a
 * marker the server takes off; the code could forge that tail, but only in its own answer.
 */
import { z } from 'zod';
import type { SandboxResult } from '../sandbox/schema';

export const MAX_CODE_CHARS = 512 * 1024;
export const MAX_STDIN_CHARS = 8 * 1024 * 1024;
export const MAX_FILES = 32;
export const MAX_RUN_TIMEOUT_SEC = 120;
export const MAX_MEMORY_MB = 8192;
export const MAX_FETCH_FILES = 8;
/** Bytes of one fetched file, and of all of them: base64 and all, they must fit the tail the sandbox keeps of stdout. */
export const MAX_FETCH_BYTES = 16 * 1024;
/** Begins the runner's line with the fetched files, the last thing on stdout. */
export const FETCH_MARKER = '\x1e[repost-fetched-files] ';

const PYTHON = new Set(['python', 'python3', 'py']);
const FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}(\/[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}){0,3}$/;

export const RunCodeRequestSchema = z.object({
  code: z.string().max(MAX_CODE_CHARS),
  language: z.string().max(40).default('python'),
  stdin: z.string().max(MAX_STDIN_CHARS).nullable().optional(),
  // SandboxFusion's own default for no memory limit is -1: zero or less means the server's default.
  run_timeout: z.number().finite().nullable().optional(),
  compile_timeout: z.number().finite().nullable().optional(),
  memory_limit_MB: z.number().finite().nullable().optional(),
  files: z.record(z.string(), z.string().nullable()).nullable().optional(),
  fetch_files: z.array(z.string()).nullable().optional(),
});
export type RunCodeRequest = z.infer<typeof RunCodeRequestSchema>;

export const RUNNER_FILE = 'solution.py';
const STDIN_FILE = '__repost_stdin__.txt';

/** The runner script: the request's stdin as `sys.stdin`, the code run as `__main__` from its own file. */
export const STDIN_RUNNER = [
  'import io, runpy, sys',
  `with open(${JSON.stringify(STDIN_FILE)}, encoding="utf-8") as _fh:`,
  '    sys.stdin = io.StringIO(_fh.read())',
  'del _fh',
  `runpy.run_path(${JSON.stringify(RUNNER_FILE)}, run_name="__main__")`,
  '',
].join('\n');

/** The runner with `fetch_files`: the same, then (however the code ended, short of its process) the files on stdout behind FETCH_MARKER. */
export function fetchingRunner(names: readonly string[]): string {
  return [
    'import io, runpy, sys',
    `with open(${JSON.stringify(STDIN_FILE)}, encoding="utf-8") as _fh:`,
    '    sys.stdin = io.StringIO(_fh.read())',
    'del _fh',
    'try:',
    `    runpy.run_path(${JSON.stringify(RUNNER_FILE)}, run_name="__main__")`,
    'finally:',
    '    import base64, json, os',
    '    _root = os.path.realpath(os.getcwd())',
    '    _files, _over, _left = {}, [], ' + String(MAX_FETCH_BYTES),
    `    for _name in ${JSON.stringify(names)}:`,
    '        _path = os.path.realpath(os.path.join(_root, _name))',
    '        if not _path.startswith(_root + os.sep) or not os.path.isfile(_path):',
    '            continue',
    '        with open(_path, "rb") as _fh:',
    '            _data = _fh.read(_left + 1)',
    '        if len(_data) > _left:',
    '            _over.append(_name)',
    '            continue',
    '        _left -= len(_data)',
    '        _files[_name] = base64.b64encode(_data).decode("ascii")',
    '    for _stream in (sys.stdout, sys.__stdout__):',
    '        try:',
    '            _stream.flush()',
    '        except Exception:',
    '            pass',
    `    _tail = ("\\n" + ${JSON.stringify(FETCH_MARKER)} + json.dumps({"files": _files, "over": _over}) + "\\n").encode()`,
    '    while _tail:',
    '        _tail = _tail[os.write(1, _tail):]',
    '',
  ].join('\n');
}

export class RunCodeRefusal extends Error {
  override name = 'RunCodeRefusal';
}

export interface RunCodePlan {
  script: string;
  files: Record<string, string>;
  timeoutSec: number;
  memoryMb: number | null;
  /** The files to return after the run (`fetch_files`), in the request's order. */
  fetch: string[];
}

function plainRelativeName(name: string): boolean {
  return FILE_NAME.test(name) && !name.split('/').some((p) => p === '..' || p === '.');
}

/** The sandbox run a request asks for; a RunCodeRefusal (answered as SandboxError) for what this server does not do. */
export function runCodePlan(request: RunCodeRequest, defaults: { timeoutSec: number; memoryMb: number }): RunCodePlan {
  if (!PYTHON.has(request.language.toLowerCase())) throw new RunCodeRefusal(`language ${JSON.stringify(request.language.slice(0, 40))} is not supported: this server runs python`);
  const files: Record<string, string> = {};
  const entries = Object.entries(request.files ?? {});
  if (entries.length > MAX_FILES) throw new RunCodeRefusal(`at most ${MAX_FILES} files`);
  for (const [name, content] of entries) {
    if (!plainRelativeName(name) || name === RUNNER_FILE || name === STDIN_FILE) throw new RunCodeRefusal(`file name ${JSON.stringify(name.slice(0, 100))} is not allowed (relative, [A-Za-z0-9_.-] parts, not ${RUNNER_FILE})`);
    const bytes = Buffer.from(content ?? '', 'base64');
    const text = bytes.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(bytes)) throw new RunCodeRefusal(`file ${name} is not UTF-8 text: binary files are not supported`);
    files[name] = text;
  }
  const timeoutSec = Math.min(MAX_RUN_TIMEOUT_SEC, Math.max(1, Math.ceil(request.run_timeout && request.run_timeout > 0 ? request.run_timeout : defaults.timeoutSec)));
  const memoryMb = request.memory_limit_MB && request.memory_limit_MB > 0 ? Math.min(MAX_MEMORY_MB, Math.max(64, Math.ceil(request.memory_limit_MB))) : null;
  const fetch = [...new Set(request.fetch_files ?? [])];
  if (fetch.length > MAX_FETCH_FILES) throw new RunCodeRefusal(`at most ${MAX_FETCH_FILES} fetch_files`);
  for (const name of fetch) if (!plainRelativeName(name)) throw new RunCodeRefusal(`fetch_files: ${JSON.stringify(name.slice(0, 100))} is not allowed (a relative path under the run's folder, [A-Za-z0-9_.-] parts, no ..)`);
  files[RUNNER_FILE] = request.code;
  files[STDIN_FILE] = request.stdin ?? '';
  return { script: fetch.length ? fetchingRunner(fetch) : STDIN_RUNNER, files, timeoutSec, memoryMb, fetch };
}

const FetchedSchema = z.object({ files: z.record(z.string(), z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/)), over: z.array(z.string()) }).strict();

/**
 * The fetched files taken off the end of stdout: the code's own output, the files (only names
 * asked for) and what to say about the rest. Without the runner's line (the code killed its
 * process, ran out of time, or printed past the kept tail) no file comes back, and the message says so.
 */
export function takeFetched(stdout: string, fetch: readonly string[]): { stdout: string; files: Record<string, string>; message: string } {
  if (fetch.length === 0) return { stdout, files: {}, message: '' };
  const at = stdout.lastIndexOf(`\n${FETCH_MARKER}`);
  const notCollected = { stdout, files: {}, message: 'fetch_files: the files could not be collected (the code ended its process, ran out of time, or printed more than the server keeps)' };
  if (at < 0) return notCollected;
  let parsed: z.infer<typeof FetchedSchema>;
  try {
    parsed = FetchedSchema.parse(JSON.parse(stdout.slice(at + 1 + FETCH_MARKER.length)));
  } catch {
    return notCollected;
  }
  const asked = new Set(fetch);
  const files = Object.fromEntries(Object.entries(parsed.files).filter(([name]) => asked.has(name)));
  const over = parsed.over.filter((name) => asked.has(name));
  return { stdout: stdout.slice(0, at), files, message: over.length ? `fetch_files: not returned, over the ${MAX_FETCH_BYTES}-byte limit (all files together): ${over.join(', ')}` : '' };
}

export interface RunCodeResponse {
  status: 'Success' | 'Failed' | 'SandboxError';
  message: string;
  compile_result: null;
  run_result: {
    status: 'Finished' | 'TimeLimitExceeded' | 'Error';
    execution_time: number | null;
    return_code: number | null;
    stdout: string;
    stderr: string;
  } | null;
  executor_pod_name: null;
  files: Record<string, string>;
}

/** Takes the runner's frames out of a traceback, so stderr reads as if the code ran as the script. */
function withoutRunnerFrames(stderr: string): string {
  return stderr.replace(/  File "[^"\n]*eval_script\.py", line \d+, in <module>\n(    [^\n]*\n)?(    [\^ ~]+\n)?/g, '').replace(/  File "<frozen runpy>", line \d+, in [^\n]+\n(    [^\n]*\n)?/g, '');
}

export function runCodeResponse(result: SandboxResult, fetch: readonly string[] = []): RunCodeResponse {
  if (result.status === 'infrastructure') return sandboxError(`sandbox failure: ${result.notes.join('; ').slice(0, 300)}`);
  const timedOut = result.status === 'timeout';
  const runStatus = timedOut ? 'TimeLimitExceeded' : 'Finished';
  const { stdout, files, message } = takeFetched(result.stdout, fetch);
  return {
    status: result.status === 'passed' ? 'Success' : 'Failed',
    message,
    compile_result: null,
    run_result: { status: runStatus, execution_time: result.durationMs / 1000, return_code: timedOut ? null : result.exitCode, stdout, stderr: withoutRunnerFrames(result.stderr) },
    executor_pod_name: null,
    files,
  };
}

export function sandboxError(message: string): RunCodeResponse {
  return { status: 'SandboxError', message, compile_result: null, run_result: null, executor_pod_name: null, files: {} };
}
