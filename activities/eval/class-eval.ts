/**
 * Class-level evaluation (OpenClassGen's question on class environments): a model is given a
 * class's skeleton and what the class uses from its repository, writes the whole class, and is
 * scored two ways:
 *   - by the environment's tests: the class answer goes into the evaluation script as
 *     `<Class>_new_implementation` (as the ground truth did when the environment was made), and
 *     each of the script's test functions runs on its own, so a class with one wrong method fails
 *     the tests that reach that method and passes the others (per-test pass rate); a class passes
 *     when every test passes (Pass@k over whole classes);
 *   - by similarity to the original class, needing no model: BLEU, ROUGE-L and TSED
 *     (similarity.ts).
 * Results are stratified by documentation level and by quartiles of the class metrics, to see
 * which class properties predict difficulty. Pure code: no sandbox, no model.
 */
import { lastCodeBlock } from './candidate';
import { insertPreamble } from './candidate-script';
import { describeFailureAt } from './failed-assertion';
import { parsePython } from './function-source';
import { passAtKs } from './pass-at-k';
import { codeSimilarity } from './similarity';
import type { CandidateSpec } from '../sandbox/harness-command';
import { isolatedPlacement } from '../sandbox/new-implementation';
import type { SyntaxNode } from '../python-parser';
import type { ClassDatasetRecord } from '../store/records';
import { addUsage, emptyUsage, type Usage } from '../store/usage';
import type { SampleOutcome } from './outcome';
import type { SnippetResult } from './test-runner';

/** A class answer: the class's definition, and the imports to put at the top of the script. */
export type ClassCandidate = { ok: true; code: string; preamble: string } | { ok: false; detail: string };

function unwrap(node: SyntaxNode): SyntaxNode | null {
  return node.type === 'decorated_definition' ? node.childForFieldName('definition') : node;
}

/** Top-level module names of the repository files a context shows (`## textkit/clean.py` -> `textkit`). */
export function contextModules(context: string): Set<string> {
  const names = new Set<string>();
  for (const m of context.matchAll(/^## (.+)$/gm)) {
    const first = m[1]!.trim().split('/')[0]!;
    names.add(first.replace(/\.py$/, ''));
  }
  return names;
}

/** The module an import names first (`a` of `from a.b import c` and of `import a.b`; '.' for a relative one). */
function importedModule(node: SyntaxNode): string {
  const name = node.type === 'import_from_statement' ? node.childForFieldName('module_name') : node.namedChildren[0];
  const text = name?.type === 'aliased_import' ? (name.childForFieldName('name')?.text ?? '') : (name?.text ?? '');
  return text.startsWith('.') ? '.' : text.split('.')[0]!;
}

/**
 * The class `className` from an answer's last code block (its last definition of that name), with
 * its imports; imports of the repository's own modules (`localModules`, and relative ones) are
 * left out: the evaluation script already defines what they would bring.
 */
export function extractClassCandidate(answer: string, className: string, localModules: ReadonlySet<string> = new Set()): ClassCandidate {
  const code = lastCodeBlock(answer) ?? (/^\s*class\s/m.test(answer) ? answer : null);
  if (code === null) return { ok: false, detail: answer.trim() ? 'the answer has no code block' : 'the answer is empty' };
  const text = code.replace(/\r\n/g, '\n');
  const root = parsePython(text).rootNode;
  const tops = root.namedChildren;
  const cls = [...tops].reverse().find((n) => {
    const d = unwrap(n);
    return d?.type === 'class_definition' && d.childForFieldName('name')?.text === className;
  });
  if (!cls) {
    const defined = tops.map(unwrap).filter((d) => d?.type === 'class_definition').map((d) => d!.childForFieldName('name')?.text ?? '?');
    return { ok: false, detail: defined.length ? `the answer defines ${defined.join(', ')} but not the class ${className}` : `the answer defines no class ${className}` };
  }
  const imports = tops.filter((n) => {
    if (n.type !== 'import_statement' && n.type !== 'import_from_statement') return false;
    const module = importedModule(n);
    return module !== '__future__' && module !== '.' && !localModules.has(module);
  });
  return { ok: true, code: text.slice(cls.startIndex, cls.endIndex), preamble: imports.map((n) => n.text).join('\n') };
}

/**
 * The evaluation script with a stub as `<Class>_new_implementation`, and the answer in a module of
 * its own for its own process (an isolated run: see isolatedPlacement); throws when it cannot be placed.
 */
export function classCandidateScript(evalScript: string, candidate: Extract<ClassCandidate, { ok: true }>, className: string): { script: string; candidate: CandidateSpec } {
  const placed = isolatedPlacement(evalScript, candidate.code, className, 'class');
  return { script: placed.script, candidate: { target: placed.target, kind: placed.kind, module: insertPreamble(placed.module, candidate.preamble).script } };
}

/**
 * What the model is shown of the class's repository: the record's context without the class
 * itself (its own file's other code stays). Null when the class is not in the context verbatim.
 */
export function contextWithoutClass(context: string, originalClass: string): string | null {
  const at = context.indexOf(originalClass);
  if (at < 0) return null;
  return (context.slice(0, at) + context.slice(at + originalClass.length)).replace(/\n{3,}/g, '\n\n');
}

/** The snippet that runs one test function of the script on its own. */
export const testSnippet = (testFunction: string) => `${testFunction}()`;

/** One test function's result on a sample: passed, or the type of what it raised. */
export interface ClassTestResult {
  test: string;
  passed: boolean;
  /** The exception type when it failed (`missing`: no result came back). */
  failure: string | null;
  /** A failed assertion as the function evaluation names one: its line and source line in the script that ran, and the values it compared when known (`AssertionError at line 12 in test_total: assert ... (expected 6, got 5)`). */
  assertion?: string;
}

export interface ClassSimilarity {
  bleu: number;
  rougeL: number;
  tsed: number | null;
}

/** One answer for a class, scored. */
export interface ClassSampleResult {
  sample: number;
  /** Why the answer could not be run (no class in it, or it could not be placed), else null. */
  error: string | null;
  tests: ClassTestResult[];
  passedTests: number;
  /** Passed tests / tests (0 when the answer could not run). */
  passRate: number;
  /** Every test passed: the class counts for Pass@k. */
  passed: boolean;
  similarity: ClassSimilarity | null;
  /** The repair rounds that followed a failing first answer, each scored the same way (none when it passed or none were asked for). */
  repairs?: ClassRepairRound[];
  /** What the sample's LLM calls (its answer and its repairs) cost. */
  usage?: Usage;
}

/** A repaired class of a sample, scored as its first answer was. */
export type ClassRepairRound = Omit<ClassSampleResult, 'sample' | 'repairs' | 'usage'> & { round: number };

/** One class's line of `class-eval.jsonl`. */
export interface ClassEvalResult {
  class_id: string;
  class_name: string;
  repo_name: string;
  class_path: string;
  split: 'train' | 'eval';
  documentation_level: 'full' | 'partial' | 'none';
  metrics: Record<string, number | null>;
  test_functions: string[];
  samples: ClassSampleResult[];
  /** Why the class could not be evaluated at all (its samples are then empty), else absent. */
  error?: string;
  /** What the class's LLM calls cost (every sample, every round). */
  usage?: Usage;
}

/** Similarity of an answer's class to the original (the three measures; ROUGE-L as its F-measure). */
export function classSimilarity(candidateClass: string, originalClass: string): ClassSimilarity {
  const s = codeSimilarity(candidateClass, originalClass);
  return { bleu: s.bleu, rougeL: s.rougeL.f, tsed: s.tsed?.similarity ?? null };
}

/** A sample's score from its tests' results. */
export function scoreClassSample(sample: number, tests: ClassTestResult[], similarity: ClassSimilarity | null, error: string | null = null): ClassSampleResult {
  const passedTests = tests.filter((t) => t.passed).length;
  const passRate = tests.length ? passedTests / tests.length : 0;
  return { sample, error, tests, passedTests, passRate, passed: error === null && tests.length > 0 && passedTests === tests.length, similarity };
}

/** A failed sample: nothing ran, every test counts as failed. */
export function unrunnableSample(sample: number, testFunctions: readonly string[], error: string, similarity: ClassSimilarity | null = null): ClassSampleResult {
  return scoreClassSample(sample, testFunctions.map((test) => ({ test, passed: false, failure: 'not_run' })), similarity, error);
}

/** One test function's result from the test runner's result for its snippet (`script`: the script that ran, for a failed assertion's source line). */
export function classTestResults(snippets: readonly SnippetResult[], testFunctions: readonly string[], script = ''): ClassTestResult[] {
  return testFunctions.map((test, i) => {
    const r = snippets[i] ?? { status: 'missing' as const };
    const result: ClassTestResult = { test, passed: r.status === 'value' || r.status === 'pass', failure: r.status === 'fail' ? r.type : r.status === 'missing' ? 'missing' : null };
    if (r.status === 'fail' && r.assertion) result.assertion = describeFailureAt({ type: r.type, ...r.assertion }, script);
    return result;
  });
}

/** A class's run as an outcome (its failure kind): an assertion when a failing test raised AssertionError, else an exception. */
export function classRunOutcome(tests: readonly ClassTestResult[]): SampleOutcome {
  const failed = tests.filter((t) => !t.passed);
  if (tests.length > 0 && failed.length === 0) return { passed: true, kind: null, exceptionType: null, summary: `all ${tests.length} test(s) passed` };
  const assertion = failed.find((t) => t.failure === 'AssertionError');
  const first = assertion ?? failed[0];
  const list = failed.map((t) => `${t.test} (${t.failure ?? 'failed'})`).join(', ');
  // The first failed assertion named first (its line, source and values), then every failed test.
  const summary = assertion?.assertion ? `${failed.length} of ${tests.length} test(s) failed; ${assertion.assertion}; failed: ${list}` : `${failed.length} of ${tests.length} test(s) failed: ${list}`;
  if (first?.failure === 'timeout') return { passed: false, kind: 'timeout', exceptionType: null, summary: summary.slice(0, 300) };
  return { passed: false, kind: assertion ? 'assertion' : 'exception', exceptionType: first?.failure ?? null, summary: summary.slice(0, assertion?.assertion ? 500 : 300) };
}

/** What a repair is told of a failed run: each test function, passed or what it raised (a failed assertion: where, and the values compared). */
export function classRepairMessage(tests: readonly ClassTestResult[], error: string | null = null): string {
  if (error) return error;
  return tests.map((t) => (t.passed ? `${t.test}: passed` : `${t.test}: failed (${t.failure === 'missing' ? 'no result: the process ended first' : t.failure === 'not_run' ? 'not run' : (t.assertion ?? `raised ${t.failure}`)})`)).join('\n');
}

export function classEvalHeader(record: ClassDatasetRecord): Omit<ClassEvalResult, 'samples'> {
  return {
    class_id: record.class_id,
    class_name: record.class_name,
    repo_name: record.repo_name,
    class_path: record.class_path,
    split: record.split,
    documentation_level: record.documentation_level,
    metrics: record.metrics,
    test_functions: record.test_functions,
  };
}

/** Figures of a group of classes. */
export interface ClassGroupFigures {
  classes: number;
  /** Pass@k over whole classes (every test passed), unbiased estimator. */
  passAtK: Record<string, number | null>;
  /** Mean over classes of the mean per-test pass rate of their samples. */
  testPassRate: number | null;
  bleu: number | null;
  rougeL: number | null;
  tsed: number | null;
}

/** Quartiles of one metric: the figures of the classes in each quarter (by the metric's rank). */
export interface MetricQuartiles {
  metric: string;
  /** Upper bound of each quartile's values (inclusive). */
  bounds: number[];
  quartiles: ClassGroupFigures[];
}

export interface ClassEvalSummary {
  classes: number;
  samplesPerClass: number;
  /** The model whose answers were scored (`ground truth` for the records' own classes). */
  model?: string;
  /** Classes that could not be evaluated at all (no sample), each with its reason. */
  errors?: { class_id: string; error: string }[];
  overall: ClassGroupFigures;
  /** Pass@k over whole classes after each self-repair round (the first: the first answers, as `overall.passAtK`). */
  passAtKByRound: Record<string, number | null>[];
  /** What the run's LLM calls cost: calls, those the cache answered, tokens and estimated dollars. */
  usage: Usage;
  byDocumentation: Partial<Record<'full' | 'partial' | 'none', ClassGroupFigures>>;
  byMetricQuartile: MetricQuartiles[];
}

/** The metrics whose quartiles the summary reports (size, complexity, coupling, cohesion). */
export const QUARTILE_METRICS = ['code_lines', 'methods', 'cyclomatic_total', 'max_nesting', 'fan_out', 'dependencies', 'lcom4'] as const;

const mean = (xs: readonly number[]): number | null => (xs.length ? Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 10000) / 10000 : null);

function figures(results: readonly ClassEvalResult[], ks: readonly number[]): ClassGroupFigures {
  const samples = results.flatMap((r) => r.samples);
  const sims = samples.map((s) => s.similarity).filter((s): s is ClassSimilarity => s !== null);
  return {
    classes: results.length,
    passAtK: passAtKs(
      results.filter((r) => r.samples.length > 0).map((r) => ({ n: r.samples.length, c: r.samples.filter((s) => s.passed).length })),
      ks,
    ),
    testPassRate: mean(results.filter((r) => r.samples.length > 0).map((r) => mean(r.samples.map((s) => s.passRate))!)),
    bleu: mean(sims.map((s) => s.bleu)),
    rougeL: mean(sims.map((s) => s.rougeL)),
    tsed: mean(sims.map((s) => s.tsed).filter((t): t is number => t !== null)),
  };
}

/** Quarters of the classes by one metric's value (ties stay together; classes without the metric left out). */
function quartiles(results: readonly ClassEvalResult[], metric: string, ks: readonly number[]): MetricQuartiles {
  const valued = results.filter((r) => typeof r.metrics[metric] === 'number').sort((a, b) => a.metrics[metric]! - b.metrics[metric]!);
  const groups: ClassEvalResult[][] = [[], [], [], []];
  valued.forEach((r, i) => {
    let q = Math.min(3, Math.floor((i * 4) / valued.length));
    // A value equal to the previous class's stays in its quartile.
    const prev = valued[i - 1];
    if (prev && prev.metrics[metric] === r.metrics[metric]) q = groups.findIndex((g) => g.includes(prev));
    groups[q]!.push(r);
  });
  return {
    metric,
    bounds: groups.map((g) => (g.length ? g[g.length - 1]!.metrics[metric]! : NaN)).filter((b) => !Number.isNaN(b)),
    quartiles: groups.filter((g) => g.length > 0).map((g) => figures(g, ks)),
  };
}

/** A sample passed by a round: its first answer, or a repair of that round or an earlier one. */
const passedBy = (s: ClassSampleResult, round: number): boolean => s.passed || (s.repairs ?? []).some((r) => r.round <= round && r.passed);

export function summarizeClassEval(results: readonly ClassEvalResult[], ks: readonly number[], options: { repairRounds?: number; model?: string } = {}): ClassEvalSummary {
  const n = Math.max(0, ...results.map((r) => r.samples.length));
  const usable = ks.filter((k) => k <= Math.max(1, n));
  const rounds = options.repairRounds ?? Math.max(0, ...results.flatMap((r) => r.samples.flatMap((s) => (s.repairs ?? []).map((x) => x.round))));
  const scored = results.filter((r) => r.samples.length > 0);
  const passAtKByRound = Array.from({ length: rounds + 1 }, (_, round) =>
    passAtKs(
      scored.map((r) => ({ n: r.samples.length, c: r.samples.filter((s) => passedBy(s, round)).length })),
      usable,
    ),
  );
  const errors = results.filter((r) => r.error).map((r) => ({ class_id: r.class_id, error: r.error! }));
  const byDocumentation: ClassEvalSummary['byDocumentation'] = {};
  for (const level of ['full', 'partial', 'none'] as const) {
    const group = results.filter((r) => r.documentation_level === level);
    if (group.length) byDocumentation[level] = figures(group, usable);
  }
  return {
    classes: results.length,
    samplesPerClass: n,
    ...(options.model ? { model: options.model } : {}),
    ...(errors.length ? { errors } : {}),
    overall: figures(results, usable),
    passAtKByRound,
    usage: results.reduce((u, r) => addUsage(u, r.usage), emptyUsage()),
    byDocumentation,
    byMetricQuartile: QUARTILE_METRICS.map((m) => quartiles(results, m, usable)),
  };
}
