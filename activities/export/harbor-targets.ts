/**
 * What a Harbor task takes from its record, by the kind of target: the one place the export tells
 * a function record from a class environment. Each kind gives a `HarborTarget` (its id and names,
 * metadata, pinned packages, the instruction, the ground truth solve.sh writes, and the verifier's
 * task.json); `harbor.ts` writes every task the same way from it.
 *
 * - A function: the answer is one definition, placed where the ground truth went; one run of the
 *   evaluation script decides (reward 1 when it passes), as `eval.ts` scores a sample.
 * - A class: the answer is the whole class; each of the environment's test functions runs on its
 *   own (the harness's test runner), as `eval.ts --classes` runs them, and the reward is 1 only
 *   when every test passes (a class counts for Pass@k that way); the fraction passed is reported
 *   beside it.
 *
 * Names and ids from the record only go into file contents (JSON or TOML strings); the test
 * functions a class task runs must be plain identifiers, since the verifier calls them.
 */
import { promptContext, hasDocstring } from '../eval/prompt-context';
import { contextModules, contextWithoutClass } from '../eval/class-eval';
import type { EvalRecord } from '../eval/dataset';
import { renderPrompt } from '../llm';
import { dedentLike, isolatedPlacement, withNewImplementation, type Placement } from '../sandbox/new-implementation';
import type { ClassDatasetRecord } from '../store/records';

/** Where the agent writes its answer, in its container; Harbor carries it to the verifier's. */
export const ANSWER_PATH = '/app/solution.py';
/** The marker line the verifier replaces with the answer's definition. */
export const SLOT = '#@@REPOST_ANSWER_SLOT@@';
/** Most test functions a class task runs (one snippet each), and the longest name one may have. */
const MAX_TESTS = 100;
const TEST_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;
const MODULE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;

export class HarborExportError extends Error {
  override name = 'HarborExportError';
}

export interface HarborTarget {
  kind: 'function' | 'class';
  /** The record's id (function_id, class_id): what the task name's hash is taken from. */
  id: string;
  /** The target as named in its file (`f`, `C.m`, `Tally`): the task name's readable part. */
  qualname: string;
  /** The definition the answer must hold. */
  name: string;
  /** task.toml's [metadata] (string values). */
  metadata: Record<string, string>;
  /** The record's pins as `name==version` (checked by the exporter before they reach a Dockerfile). */
  requirements: string[];
  instruction: string;
  /** What solve.sh writes to the answer file (the ground truth, dedented). */
  truth: string;
  /** The verifier's tests/task.json. */
  verifier: Record<string, unknown>;
  /** How long the verification's run may take, in seconds (the verifier's own limit adds slack). */
  runTimeoutSec: number;
}

/** The evaluation script with a marked line where the answer's definition goes, and its indentation. */
export function answerSlot(record: Pick<EvalRecord, 'evalScript' | 'qualname'>): { script: string; indent: string; preambleAt: number } {
  const name = record.qualname.split('.').pop()!;
  const marker = `def ${name}(*args, **kwargs):\n    ${SLOT}\n`;
  const placed = withNewImplementation(record.evalScript, marker, record.qualname);
  const lines = placed.split('\n');
  const at = lines.findIndex((l) => l.trim() === SLOT);
  if (at < 1 || !lines[at - 1]!.trimStart().startsWith(`def ${name}_new_implementation(`)) throw new HarborExportError(`cannot mark where ${record.qualname}'s answer goes in its script`);
  const indent = /^\s*/.exec(lines[at - 1]!)![0];
  lines.splice(at - 1, 2, `${indent}${SLOT}`);
  const script = lines.join('\n');
  return { script, indent, preambleAt: afterFuture(script) };
}

/** Where the answer's imports go: after `from __future__` imports (and the docstring before them). */
function afterFuture(text: string): number {
  const future = [...text.matchAll(/^from __future__ import [^\n]*\n/gm)].pop();
  return future ? future.index! + future[0].length : 0;
}

export interface IsolatedSlot {
  script: string;
  module: string;
  indent: string;
  preambleAt: number;
  target: string;
  kind: Placement;
}

/**
 * An isolated run's halves (see isolatedPlacement): the script the trusted process runs (a stub as
 * `<name>_new_implementation`), and the candidate's module with a marked line where the answer's
 * definition goes (under its own name), its indentation and where the answer's imports go.
 */
/**
 * The definition that marks the answer's place, by placement: its keyword and a definition of the
 * target's name whose body is the marker line (a `pass` after it keeps the definition whole).
 */
const SLOT_DEFINITION: Readonly<Record<Placement, { keyword: string; marker: (name: string) => string }>> = {
  function: { keyword: 'def', marker: (name) => `def ${name}(*args, **kwargs):\n    ${SLOT}\n    pass\n` },
  class: { keyword: 'class', marker: (name) => `class ${name}:\n    ${SLOT}\n    pass\n` },
};

export function isolatedSlot(evalScript: string, qualname: string, placement: Placement = 'function'): IsolatedSlot {
  const name = qualname.split('.').pop()!;
  const { keyword, marker } = SLOT_DEFINITION[placement];
  const placed = isolatedPlacement(evalScript, marker(name), qualname, placement);
  const lines = placed.module.split('\n');
  const at = lines.findIndex((l) => l.trim() === SLOT);
  if (at < 1 || !new RegExp(`^${keyword} ${name}\\b`).test(lines[at - 1]!.trimStart()) || lines[at + 1]?.trim() !== 'pass') {
    throw new HarborExportError(`cannot mark where ${qualname}'s answer goes in its candidate module`);
  }
  const indent = /^\s*/.exec(lines[at - 1]!)![0];
  lines.splice(at - 1, 3, `${indent}${SLOT}`);
  const module = lines.join('\n');
  return { script: placed.script, module, indent, preambleAt: afterFuture(module), target: placed.target, kind: placed.kind };
}

function testFunctions(script: string): string[] {
  return [...script.matchAll(/^def (test_\w+)\s*\(/gm)].map((m) => m[1]!).slice(0, MAX_TESTS);
}

/** The solve prompt eval.ts would send (the original docstring, else the record's generated one). */
export function instructionOf(record: EvalRecord): string {
  const generated = !hasDocstring(record.origFunc) && record.generatedDocstring ? record.generatedDocstring : undefined;
  const context = promptContext(record, generated ? { mode: 'generated', generated } : { mode: 'original' });
  const prompt = renderPrompt('solve', { functionName: record.qualname, context });
  const user = prompt.messages.find((m) => m.role === 'user')!.content;
  return [
    `# Implement \`${record.qualname}\``,
    '',
    user.trim(),
    '',
    '## Where the answer goes',
    '',
    `Write the complete definition of \`${record.name}\` (its signature and body, with any imports it needs at the top of the file) to \`${ANSWER_PATH}\`.`,
    `Only that file is graded: it is placed in a hidden evaluation script that compares your \`${record.name}\` with the original on its tests. Python 3 and the packages the code needs are installed; the grader runs without a network.`,
    '',
  ].join('\n');
}

/** A function record's task: one run of its evaluation script with the answer in its own process. */
export function functionTarget(record: EvalRecord, timeoutSec: number): HarborTarget {
  const slot = answerSlot(record);
  // The verifier runs the answer as eval.ts does: in a process of its own (`isolated`).
  const isolated = isolatedSlot(record.evalScript, record.qualname);
  return {
    kind: 'function',
    id: record.functionId,
    qualname: record.qualname,
    name: record.name,
    metadata: { function_id: record.functionId, repo: record.repo, path: record.path, qualname: record.qualname, kind: 'function', category: 'python-function', ...(record.split ? { split: record.split } : {}) },
    requirements: record.requirements,
    instruction: instructionOf(record),
    truth: dedentLike(record.origFunc).replace(/\s+$/, ''),
    verifier: { name: record.name, qualname: record.qualname, kind: 'function', scoring: 'script', script: slot.script, indent: slot.indent, preambleAt: slot.preambleAt, isolated, timeoutSec, tests: testFunctions(record.evalScript) },
    runTimeoutSec: timeoutSec,
  };
}

/** The class solve prompt eval.ts --classes sends (the skeleton, the context without the class). */
export function classInstructionOf(record: ClassDatasetRecord): string {
  const context = contextWithoutClass(record.orig_context, record.orig_class);
  if (context === null) throw new HarborExportError(`class ${record.class_id}: its context does not hold the class as written, so the instruction would show the answer`);
  const prompt = renderPrompt('class_solve', { functionName: record.class_name, context, skeleton: record.class_skeleton });
  const user = prompt.messages.find((m) => m.role === 'user')!.content;
  return [
    `# Implement the class \`${record.class_name}\``,
    '',
    user.trim(),
    '',
    '## Where the answer goes',
    '',
    `Write the complete class \`${record.class_name}\` (with any imports it needs at the top of the file) to \`${ANSWER_PATH}\`.`,
    `Only that file is graded: the class is placed in a hidden evaluation script and each of its ${record.test_functions.length} test function(s) runs on its own, comparing your class with the original; the reward is 1 when every test passes. What the class uses from its repository is defined in that script (imports of the repository's own modules are dropped). Python 3 and the packages the code needs are installed; the grader runs without a network.`,
    '',
  ].join('\n');
}

/** A class environment's task: each test function run on its own against the answer's class in its own process. */
export function classTarget(record: ClassDatasetRecord, timeoutSec: number): HarborTarget {
  const tests = record.test_functions;
  if (tests.length === 0) throw new HarborExportError(`class ${record.class_id}: the record lists no test function`);
  if (tests.length > MAX_TESTS) throw new HarborExportError(`class ${record.class_id}: more than ${MAX_TESTS} test functions`);
  const bad = tests.find((t) => !TEST_NAME.test(t));
  if (bad !== undefined) throw new HarborExportError(`class ${record.class_id}: a test function's name is not a Python identifier: ${JSON.stringify(bad.slice(0, 60))}`);
  if (!TEST_NAME.test(record.class_name)) throw new HarborExportError(`class ${record.class_id}: the class name is not a Python identifier: ${JSON.stringify(record.class_name.slice(0, 60))}`);
  let isolated: IsolatedSlot;
  try {
    isolated = isolatedSlot(record.eval_script, record.class_name, 'class');
  } catch (err) {
    if (err instanceof HarborExportError) throw err;
    throw new HarborExportError(`class ${record.class_id}: ${(err as Error).message}`);
  }
  const localModules = [...contextModules(record.orig_context)].filter((m) => MODULE_NAME.test(m)).slice(0, 100);
  // As eval.ts --classes: each test's own limit, and the run's: enough for every test plus loading.
  const runTimeoutSec = timeoutSec * (tests.length + 3);
  return {
    kind: 'class',
    id: record.class_id,
    qualname: record.class_name,
    name: record.class_name,
    metadata: { class_id: record.class_id, repo: record.repo_name, path: record.class_path, qualname: record.qualname, kind: 'class', category: 'python-class', split: record.split, documentation_level: record.documentation_level },
    requirements: record.packages.map((p) => `${p.name}==${p.version}`),
    instruction: classInstructionOf(record),
    truth: dedentLike(record.orig_class).replace(/\s+$/, ''),
    verifier: { name: record.class_name, qualname: record.class_name, kind: 'class', scoring: 'per-test', isolated, localModules, timeoutSec, runTimeoutSec, tests },
    runTimeoutSec,
  };
}
