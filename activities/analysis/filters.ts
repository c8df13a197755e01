/**
 * The candidate filters of RepoST (after R2E): each a named rule; the first rule that rejects a
 * function is recorded as `droppedBy`, so the funnel can say why every function was dropped.
 */
import type { ExtractedFunction } from './extract';
import { isOutputOnlyFunction } from './output-only';
import type { AnalysisOptions } from './types';

/**
 * Keyword groups for code that cannot run in a sandbox without GPUs, cloud credentials, a
 * display, extra processes, an event loop or a terminal. Matched on the function's own source.
 */
export const KEYWORD_GROUPS: Record<string, RegExp> = {
  gpu: /\b(cuda|cudnn|cupy|gpu|gpus|nvidia|nccl|torch\.distributed|tpu|jax\.devices|to\(\s*['"]cuda)/i,
  cloud: /\b(boto3?|botocore|s3|aws|azure|gcp|google\.cloud|bigquery|firebase|firestore|dynamodb|sagemaker|kubernetes)\b/i,
  plotting: /\b(matplotlib|pyplot|plt|seaborn|sns|plotly|bokeh|altair|savefig|imshow)\b/,
  multiprocessing: /\b(multiprocessing|threading|Thread|ThreadPool|ProcessPool\w*|ThreadPoolExecutor|ProcessPoolExecutor|concurrent\.futures|mpi4py|dask|joblib|Pool)\b|\bray\.(init|remote|get|put)\b/,
  async: /(\basync\s+(def|with|for)\b|\bawait\b|\basyncio\b|\baiohttp\b|\btrio\b)/,
  cli: /(\bargparse\b|\bArgumentParser\b|\bclick\.|@click\b|\btyper\b|\bsys\.argv\b|\binput\s*\(|\bgetpass\b|\bfire\.Fire\b)/,
  gui: /\b(tkinter|Tkinter|PyQt\d?|PySide\d?|pygame|wx\.|curses)\b/,
};

const TEST_PATH_SEGMENT = /^(tests?|testing|unit_?tests?|test_?utils?)$/i;

export function isTestPath(path: string): boolean {
  const parts = path.split('/');
  const file = parts[parts.length - 1]!;
  if (/^test_.*\.py$|_tests?\.py$|^tests?\.py$|^conftest\.py$/.test(file)) return true;
  return parts.slice(0, -1).some((p) => TEST_PATH_SEGMENT.test(p));
}

/** A test class by name or by inheriting from a unittest TestCase. */
export function isTestClassName(name: string, bases: string[] = []): boolean {
  if (/^Test|Tests?$|TestCase$/.test(name)) return true;
  return bases.some((b) => /(^|\.)(TestCase|IsolatedAsyncioTestCase)$/.test(b));
}

/**
 * The body does nothing a test could observe: pass, `...`, a literal return, raise
 * NotImplementedError. Decided during extraction, where the body's first statements are at hand.
 */
export function isTrivialBody(fn: ExtractedFunction): boolean {
  return fn.trivialBody;
}

/** Arguments a caller passes: self/cls of a method do not count. */
export function callerArguments(fn: ExtractedFunction): string[] {
  if (fn.kind === 'method' && !fn.decorators.some((d) => d === 'staticmethod')) return fn.params.slice(1);
  return fn.params;
}

/** Applies the enabled rules in a fixed order; returns the first rule that rejects, or null. */
export function firstFailingRule(fn: ExtractedFunction, shadowed: boolean, options: AnalysisOptions): string | null {
  const r = options.rules;
  if (r.noShadowed && shadowed) return 'shadowed';
  if (r.noTestCode) {
    if (isTestPath(fn.path)) return 'test-file';
    if (/^test/.test(fn.name) || fn.classChain.some((c, i) => isTestClassName(c, i === fn.classChain.length - 1 ? fn.classBases : []))) return 'test-code';
  }
  if (r.noDunder && /^__.*__$/.test(fn.name)) return 'dunder';
  if (r.requireArguments && callerArguments(fn).length === 0) return 'no-arguments';
  if (r.requireReturn && !fn.returns) return 'no-return';
  if (r.requireDocstring && !fn.docstring) return 'no-docstring';
  if (r.noTrivialLiteral && isTrivialBody(fn)) return 'trivial-body';
  if (r.sizeLimits) {
    const lines = fn.endLine - fn.startLine + 1;
    if (lines < options.minLines) return 'too-short';
    if (lines > options.maxLines) return 'too-long';
  }
  if (r.keywords) {
    const text = fn.source;
    for (const [group, re] of Object.entries(KEYWORD_GROUPS)) if (re.test(text)) return `keyword:${group}`;
    for (const kw of options.extraKeywords) if (text.includes(kw)) return `keyword:${kw}`;
  }
  return null;
}

/** Words an output call's text holds; a function without any cannot be output-only (spares the walk). */
const OUTPUT_WORD = /\b(print|pprint|write|log\w*|warn\w*|debug|info|error|exception|critical)\b/;

/**
 * The rule after the selection (either preset's): `output-only` for a function whose only effect
 * is output the tests may not compare (output-only.ts), so it is dropped before any LLM call.
 */
export function outputOnlyRule(fn: ExtractedFunction, options: AnalysisOptions): 'output-only' | null {
  return options.rules.noOutputOnly && hasOnlyOutput(fn) ? 'output-only' : null;
}

/** The function's only effect is output the tests may not compare (output-only.ts). */
export function hasOnlyOutput(fn: ExtractedFunction): boolean {
  return OUTPUT_WORD.test(fn.source) && isOutputOnlyFunction(fn.node);
}
