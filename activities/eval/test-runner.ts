/**
 * One sandbox run that executes many snippets against one evaluation script, through the
 * harness's `repost_test_runner.py`: a candidate against every candidate test (a row of the
 * pass/fail matrix), or the original function on every augmentation input (their outputs).
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { HARNESS_DIR } from '../sandbox/container-spec';
import type { RunRequest } from '../sandbox/executor';

export type RunnerMode = 'matrix' | 'outputs';

const MODULE_FILE = 'candidate_module.py';
const REQUEST_FILE = 'runner_request.json';

/**
 * The run's own script only hands over to the harness module, loaded from its file: an `import`
 * statement would make the executor's import scan take the harness module for a package to install.
 */
function launcherScript(): string {
  return [
    'import importlib.util',
    `spec = importlib.util.spec_from_file_location("repost_test_runner", ${JSON.stringify(`${HARNESS_DIR}/repost_test_runner.py`)})`,
    'runner = importlib.util.module_from_spec(spec)',
    'spec.loader.exec_module(runner)',
    `runner.main(${JSON.stringify(MODULE_FILE)}, ${JSON.stringify(REQUEST_FILE)})`,
    '',
  ].join('\n');
}

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
  /** Fixed in tests; random otherwise, so a snippet cannot forge another's result line. */
  nonce?: string;
}

export function runnerRequest(options: RunnerRequestOptions): { request: RunRequest; nonce: string } {
  const nonce = options.nonce ?? randomBytes(8).toString('hex');
  const body = { mode: options.mode, target: options.target, snippets: options.snippets, timeoutSec: options.snippetTimeoutSec, nonce };
  return {
    nonce,
    request: {
      script: launcherScript(),
      files: { [MODULE_FILE]: options.script, [REQUEST_FILE]: JSON.stringify(body) },
      install: true,
      requirements: options.requirements,
      timeoutSec: options.timeoutSec ?? options.snippetTimeoutSec * (options.snippets.length + 3),
    },
  };
}

export type SnippetResult = { status: 'pass' } | { status: 'fail'; type: string } | { status: 'value'; repr: string } | { status: 'missing' };

/**
 * Reads the result lines; a snippet without a line (the process died first) is `missing`, and
 * a failure to load the module fails every snippet.
 */
export function parseRunnerOutput(stdout: string, nonce: string, count: number): SnippetResult[] {
  const results: SnippetResult[] = Array.from({ length: count }, () => ({ status: 'missing' }));
  const prefix = `REPOST-RUNNER ${nonce} `;
  for (const line of stdout.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const m = /^(\S+) (pass|fail|error|value) (.*)$/.exec(line.slice(prefix.length));
    if (!m) continue;
    const [, where, status, rest] = m as unknown as [string, string, string, string];
    if (where === 'load') return results.map(() => ({ status: 'fail', type: rest }));
    const i = Number(where);
    if (!Number.isInteger(i) || i < 0 || i >= count) continue;
    if (status === 'pass') results[i] = { status: 'pass' };
    else if (status === 'value') {
      const repr = z.string().safeParse(safeJson(rest));
      results[i] = repr.success ? { status: 'value', repr: repr.data } : { status: 'fail', type: 'BadReport' };
    } else results[i] = { status: 'fail', type: rest };
  }
  return results;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A matrix row as a compact string ('1' pass, '0' anything else), small enough for a payload. */
export function matrixRow(results: readonly SnippetResult[]): string {
  return results.map((r) => (r.status === 'pass' ? '1' : '0')).join('');
}
