/**
 * A run's result as text: the error a model is shown in a debug or repair round, and the one line
 * a history, a rejection or a retried failure carries.
 */
import type { SandboxResult } from './schema';

/**
 * Error text quoted in a debug or repair round: the exception and traceback, else the output's tail.
 * Each run has its own scratch folder; its random name is cut from paths so that the same
 * failure gives the same prompt (and a cache hit on a re-run).
 */
export function errorMessageOf(result: SandboxResult): string {
  const head = `status: ${result.status}${result.exitCode !== null ? ` (exit code ${result.exitCode})` : ''}`;
  const tail = (s: string) => s.split('\n').slice(-40).join('\n');
  const body = result.exception
    ? result.exception.traceback || `${result.exception.type}: ${result.exception.message}`
    : tail(result.stderr) || tail(result.stdout) || '(no output)';
  return `${head}\n${body.replace(/\/scratch\/run-[0-9a-f]+\//g, '')}`;
}

/** One line for histories and rejections: the exception, else the status and the last line of output. */
export function summaryLine(result: SandboxResult): string {
  if (result.exception) return `${result.exception.type}: ${result.exception.message}`.slice(0, 300);
  const last = (result.stderr.trim() || result.stdout.trim()).split('\n').pop() ?? '';
  return `${result.status}${result.exitCode !== null ? ` (exit ${result.exitCode})` : ''}${last ? `: ${last.slice(0, 250)}` : ''}`;
}
