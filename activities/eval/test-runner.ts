/**
 * One sandbox run that executes many snippets against one evaluation script, through the
 * harness's `repost_test_runner.py`: a candidate against every candidate test (a row of the
 * pass/fail matrix), or the original function on every augmentation input (their outputs).
 *
 * The results travel from the runner to the supervisor through the harness's own report channel
 * and come back in the run's result (`SandboxResult.runner`): nothing the candidate prints, and
 * no file in its folder, is read as a result, and no secret of the run sits where it can read it.
 */
import type { CandidateSpec } from '../sandbox/harness-command';
import type { RunRequest } from '../sandbox/run-request';
import type { RunnerAssertion, SandboxResult } from '../sandbox/schema';

export type RunnerMode = 'matrix' | 'outputs';

export interface RunnerRequestOptions {
  mode: RunnerMode;
  /** The evaluation script (for `matrix`, with the candidate inserted as the new implementation). */
  script: string;
  target: string;
  snippets: readonly string[];
  snippetTimeoutSec: number;
  /** The whole run's limit; default: enough for every snippet's limit plus loading. */
  timeoutSec?: number;
  requirements?: string[];
  /** `matrix` in an isolated run: the candidate in a process of its own (`script` then holds the stub). */
  candidate?: CandidateSpec;
}

export function runnerRequest(options: RunnerRequestOptions): RunRequest {
  return {
    // The script is scanned for its imports like any other; the runner loads it as a module.
    script: options.script,
    runner: { mode: options.mode, target: options.target, snippets: options.snippets, timeoutSec: options.snippetTimeoutSec },
    install: true,
    requirements: options.requirements,
    timeoutSec: options.timeoutSec ?? options.snippetTimeoutSec * (options.snippets.length + 3),
    ...(options.candidate ? { candidate: options.candidate } : {}),
  };
}

export type SnippetResult = { status: 'pass' } | { status: 'fail'; type: string; assertion?: RunnerAssertion } | { status: 'value'; repr: string } | { status: 'missing' };

/**
 * The run's results per snippet: a snippet without a result (the process died first, or the
 * report was refused) is `missing`, and a failure to load the module fails every snippet.
 */
export function snippetResults(result: Pick<SandboxResult, 'runner'>, count: number): SnippetResult[] {
  const report = result.runner ?? null;
  if (report?.loadFailure) return Array.from({ length: count }, () => ({ status: 'fail', type: report.loadFailure! }));
  return Array.from({ length: count }, (_, i): SnippetResult => {
    const s = report?.snippets[i];
    if (!s) return { status: 'missing' };
    if (s.status === 'pass') return { status: 'pass' };
    if (s.status === 'value') return { status: 'value', repr: s.detail };
    return { status: 'fail', type: s.detail, ...(s.assertion ? { assertion: s.assertion } : {}) };
  });
}

/** A matrix row as a compact string ('1' pass, '0' anything else), small enough for a payload. */
export function matrixRow(results: readonly SnippetResult[]): string {
  return results.map((r) => (r.status === 'pass' ? '1' : '0')).join('');
}
