/**
 * SandboxFusion's `POST /run_code` for Python: its request read (and bounded), turned into one
 * sandbox run, and the run turned into its response shape, so a client written for SandboxFusion
 * (verl's `reward_model.sandbox_fusion.url`) works unchanged.
 *
 * The code runs as the script of a sandbox run. SandboxFusion feeds `stdin` to the program; the
 * harness gives scripts an empty stdin, so a small runner script sets `sys.stdin` to the request's
 * text and runs the code as `__main__` from its own file. `files` (base64, SandboxFusion's
 * encoding) are written beside it as text; `fetch_files` is answered with no files.
 */
import { z } from 'zod';
import type { SandboxResult } from '../sandbox/schema';

export const MAX_CODE_CHARS = 512 * 1024;
export const MAX_STDIN_CHARS = 8 * 1024 * 1024;
export const MAX_FILES = 32;
export const MAX_RUN_TIMEOUT_SEC = 120;
export const MAX_MEMORY_MB = 8192;

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

export class RunCodeRefusal extends Error {
  override name = 'RunCodeRefusal';
}

export interface RunCodePlan {
  script: string;
  files: Record<string, string>;
  timeoutSec: number;
  memoryMb: number | null;
}

/** The sandbox run a request asks for; a RunCodeRefusal (answered as SandboxError) for what this server does not do. */
export function runCodePlan(request: RunCodeRequest, defaults: { timeoutSec: number; memoryMb: number }): RunCodePlan {
  if (!PYTHON.has(request.language.toLowerCase())) throw new RunCodeRefusal(`language ${JSON.stringify(request.language.slice(0, 40))} is not supported: this server runs python`);
  const files: Record<string, string> = {};
  const entries = Object.entries(request.files ?? {});
  if (entries.length > MAX_FILES) throw new RunCodeRefusal(`at most ${MAX_FILES} files`);
  for (const [name, content] of entries) {
    if (!FILE_NAME.test(name) || name.split('/').some((p) => p === '..' || p === '.') || name === RUNNER_FILE || name === STDIN_FILE) throw new RunCodeRefusal(`file name ${JSON.stringify(name.slice(0, 100))} is not allowed (relative, [A-Za-z0-9_.-] parts, not ${RUNNER_FILE})`);
    const bytes = Buffer.from(content ?? '', 'base64');
    const text = bytes.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(bytes)) throw new RunCodeRefusal(`file ${name} is not UTF-8 text: binary files are not supported`);
    files[name] = text;
  }
  const timeoutSec = Math.min(MAX_RUN_TIMEOUT_SEC, Math.max(1, Math.ceil(request.run_timeout && request.run_timeout > 0 ? request.run_timeout : defaults.timeoutSec)));
  const memoryMb = request.memory_limit_MB && request.memory_limit_MB > 0 ? Math.min(MAX_MEMORY_MB, Math.max(64, Math.ceil(request.memory_limit_MB))) : null;
  files[RUNNER_FILE] = request.code;
  files[STDIN_FILE] = request.stdin ?? '';
  return { script: STDIN_RUNNER, files, timeoutSec, memoryMb };
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

export function runCodeResponse(result: SandboxResult): RunCodeResponse {
  if (result.status === 'infrastructure') return sandboxError(`sandbox failure: ${result.notes.join('; ').slice(0, 300)}`);
  const timedOut = result.status === 'timeout';
  const runStatus = timedOut ? 'TimeLimitExceeded' : 'Finished';
  return {
    status: result.status === 'passed' ? 'Success' : 'Failed',
    message: '',
    compile_result: null,
    run_result: { status: runStatus, execution_time: result.durationMs / 1000, return_code: timedOut ? null : result.exitCode, stdout: result.stdout, stderr: withoutRunnerFrames(result.stderr) },
    executor_pod_name: null,
    files: {},
  };
}

export function sandboxError(message: string): RunCodeResponse {
  return { status: 'SandboxError', message, compile_result: null, run_result: null, executor_pod_name: null, files: {} };
}
