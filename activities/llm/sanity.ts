/**
 * Sanity checks on what the LLM returns from the sandboxing and test-generation steps
 * (RepoST, Appendix Tables 11 and 12). They are cheap static checks run before anything
 * executes, catching answers that dropped the target function, gutted it, threw away
 * context, or wrote tests that cannot tell implementations apart. A failed check is a value
 * (the workflow regenerates or rejects), never an exception.
 *
 * Token counts are lexical Python tokens from tree-sitter (names, literals, operators,
 * keywords); comments and whitespace do not count, so reformatting or dropping a comment is
 * never mistaken for lost code, while losing a statement always is.
 */
import type Parser from 'tree-sitter';
import { createPythonParser } from '../python-parser';
import { implementationReads } from './implementation-reads';
import { newImplementationName, testFunctionName } from './prompts';
import { TestReach } from './test-reach';

type Node = Parser.SyntaxNode;

let parser: Parser | undefined;
/** Parses Python source and returns the root node. */
function parse(code: string): { rootNode: Node } {
  if (!parser) {
    parser = createPythonParser();
  }
  // The binding reads source in chunks of bufferSize; size it to the text.
  const tree = parser.parse(code, undefined, { bufferSize: Math.max(64 * 1024, code.length * 2 + 1024) });
  return { rootNode: tree.rootNode };
}

/** Allowed shortfalls (RepoST): the sandboxed function may lose at most 20 tokens, the script 50. */
export const MAX_FUNCTION_TOKEN_LOSS = 20;
export const MAX_SCRIPT_TOKEN_LOSS = 50;
export const MIN_TEST_ASSERTIONS = 3;

export type SanityCheckId =
  | 'parses'
  | 'target_exists'
  | 'target_not_shrunk'
  | 'script_keeps_context'
  | 'script_not_shrunk'
  | 'test_function_exists'
  | 'test_calls_target'
  | 'test_calls_new_implementation'
  | 'test_has_assertions'
  | 'main_block_exists'
  | 'main_calls_test'
  | 'main_call_not_in_try'
  | 'tests_read_implementation';

/**
 * How the test function must reach the two implementations: `literal` (RepoST's rule, the
 * default): its own text calls `<name>(` and `<name>_new_implementation(`; `reachable`: it
 * reaches a call of each through the script's own functions (a helper it passes them to, a loop
 * over them; see `test-reach.ts`).
 */
export type TestCallsRule = 'literal' | 'reachable';
export const TEST_CALLS_RULES: readonly TestCallsRule[] = ['literal', 'reachable'];

export interface SanityFailure {
  check: SanityCheckId;
  detail: string;
}

export interface SanityReport {
  passed: boolean;
  failures: SanityFailure[];
  /** The measurements behind the verdict, for records and reports. */
  measures: Record<string, number>;
}

function leaves(node: Node, out: Node[] = []): Node[] {
  if (node.type === 'comment') return out;
  if (node.childCount === 0) {
    if (!node.isMissing && node.text.trim() !== '') out.push(node);
    return out;
  }
  // A string literal is one token however it is split into parts.
  if (node.type === 'string' || node.type === 'concatenated_string') {
    out.push(node);
    return out;
  }
  for (const child of node.children) leaves(child, out);
  return out;
}

/** Lexical tokens of Python source, without comments. */
export function countCodeTokens(code: string): number {
  return leaves(parse(stripFences(code)).rootNode).length;
}

/** Contexts arrive as markdown-ish text (`## path` headers, maybe code fences); keep only code. */
function stripFences(text: string): string {
  return text
    .split('\n')
    .filter((l) => !/^\s*(```|~~~)/.test(l))
    .join('\n');
}

function definitionsIn(block: Node | null): Node[] {
  if (!block) return [];
  return block.namedChildren.map((c) => (c.type === 'decorated_definition' ? c.childForFieldName('definition') ?? c : c));
}

/** The top-level class `name` (the last one, as Python binds it), or undefined. */
export function findClassDefinition(root: Node, name: string): Node | undefined {
  return [...definitionsIn(root)].reverse().find((d) => d.type === 'class_definition' && d.childForFieldName('name')?.text === name);
}

/** Finds `name` or `Class.method` (or deeper) among top-level definitions. */
export function findDefinition(root: Node, qualifiedName: string): Node | undefined {
  const parts = qualifiedName.split('.');
  let scope: Node | null = root;
  let found: Node | undefined;
  for (const [i, part] of parts.entries()) {
    const wanted = i === parts.length - 1 ? ['function_definition'] : ['class_definition'];
    const defs: Node[] = definitionsIn(scope);
    // The last definition wins, as in Python when a name is redefined.
    found = [...defs].reverse().find((d) => wanted.includes(d.type) && d.childForFieldName('name')?.text === part);
    if (!found) return undefined;
    scope = found.childForFieldName('body');
  }
  return found;
}

function callsTo(node: Node, simpleName: string): Node[] {
  return node.descendantsOfType('call').filter((call) => {
    const fn = call.childForFieldName('function');
    if (!fn) return false;
    if (fn.type === 'identifier') return fn.text === simpleName;
    if (fn.type === 'attribute') return fn.childForFieldName('attribute')?.text === simpleName;
    return false;
  });
}

function isMainGuard(node: Node): boolean {
  if (node.type !== 'if_statement') return false;
  const cond = node.childForFieldName('condition')?.text.replace(/\s+/g, '').replace(/'/g, '"');
  return cond === '__name__=="__main__"' || cond === '"__main__"==__name__';
}

/**
 * Tests must judge behaviour: reading the implementations' code objects, bytecode, source text or
 * identity fails every faithful reimplementation and kills every mutant (implementation-reads.ts).
 */
function checkTestsReadBehaviour(root: Node, implementations: string[], tests: Node[], mains: Node[], failures: SanityFailure[]): void {
  const reads = implementationReads(root, implementations, tests, mains);
  if (reads.length === 0) return;
  const shown = reads.slice(0, 3).map((r) => `line ${r.line}: ${r.what.length > 120 ? `${r.what.slice(0, 117)}...` : r.what}`);
  failures.push({
    check: 'tests_read_implementation',
    detail: `the tests judge the implementation itself, not its behaviour (${shown.join('; ')}${reads.length > 3 ? `; ${reads.length - 3} more` : ''})`,
  });
}

function firstSyntaxError(root: Node): string | undefined {
  if (!root.hasError) return undefined;
  const bad = root.descendantsOfType('ERROR')[0];
  return bad ? `syntax error at line ${bad.startPosition.row + 1}` : 'syntax error';
}

interface FunctionCheckInput {
  functionName: string;
  /** The function as it is in the repository. */
  originalFunction: string;
}

function checkTarget(root: Node, input: FunctionCheckInput, failures: SanityFailure[], measures: Record<string, number>): void {
  const target = findDefinition(root, input.functionName);
  if (!target) {
    failures.push({ check: 'target_exists', detail: `the script defines no function ${input.functionName}` });
    return;
  }
  const original = countCodeTokens(input.originalFunction);
  const sandboxed = leaves(target).length;
  measures.originalFunctionTokens = original;
  measures.sandboxedFunctionTokens = sandboxed;
  if (sandboxed < original - MAX_FUNCTION_TOKEN_LOSS) {
    failures.push({
      check: 'target_not_shrunk',
      detail: `${input.functionName} has ${sandboxed} tokens in the script but ${original} in the repository (more than ${MAX_FUNCTION_TOKEN_LOSS} fewer)`,
    });
  }
}

/** The checks both steps start with: the script parses, defines the target, and keeps its size. */
function checkScriptAndTarget(input: FunctionCheckInput & { script: string }): ParsedScript {
  return parsedScript(input.script, (root, failures, measures) => checkTarget(root, input, failures, measures));
}

type ParsedScript = { root: Node; failures: SanityFailure[]; measures: Record<string, number> };

/** A script parsed, its syntax error if any, then its target's checks (a function's or a class's). */
function parsedScript(script: string, checkItsTarget: (root: Node, failures: SanityFailure[], measures: Record<string, number>) => void): ParsedScript {
  const failures: SanityFailure[] = [];
  const measures: Record<string, number> = {};
  const root = parse(script).rootNode;
  const syntax = firstSyntaxError(root);
  if (syntax) failures.push({ check: 'parses', detail: syntax });
  checkItsTarget(root, failures, measures);
  return { root, failures, measures };
}

/** Table 11: the answer of a sandboxing (or aggregate-and-sandbox) step. */
export function checkSandboxScript(input: FunctionCheckInput & { script: string; /** The target file and local dependencies the LLM was given. */ context: string }): SanityReport {
  const { root, failures, measures } = checkScriptAndTarget(input);
  const scriptTokens = leaves(root).length;
  const contextTokens = countCodeTokens(input.context);
  measures.scriptTokens = scriptTokens;
  measures.contextTokens = contextTokens;
  if (scriptTokens < contextTokens - MAX_SCRIPT_TOKEN_LOSS) {
    failures.push({
      check: 'script_keeps_context',
      detail: `the script has ${scriptTokens} tokens but the code it was given has ${contextTokens} (more than ${MAX_SCRIPT_TOKEN_LOSS} fewer)`,
    });
  }
  return { passed: failures.length === 0, failures, measures };
}

/** Table 12: the answer of a test-generation step (also applicable after debug and coverage rounds). */
export function checkTestScript(
  input: FunctionCheckInput & { script: string; /** The script the tests were added to. */ sandboxScript: string; /** Default `literal` (RepoST's). */ testCalls?: TestCallsRule },
): SanityReport {
  const { root, failures, measures } = checkScriptAndTarget(input);

  const scriptTokens = leaves(root).length;
  const sandboxTokens = countCodeTokens(input.sandboxScript);
  measures.scriptTokens = scriptTokens;
  measures.sandboxScriptTokens = sandboxTokens;
  if (scriptTokens < sandboxTokens) {
    failures.push({ check: 'script_not_shrunk', detail: `the script with tests has ${scriptTokens} tokens, fewer than the ${sandboxTokens} of the sandboxed script` });
  }

  const simple = input.functionName.split('.').pop()!;
  const testName = testFunctionName(input.functionName);
  const newImpl = newImplementationName(simple);
  // Tests of methods are sometimes written as methods of the class itself (RepoST keeps those).
  const test =
    findDefinition(root, testName) ??
    root.descendantsOfType('function_definition').find((d) => d.childForFieldName('name')?.text === testName);
  if (!test) {
    failures.push({ check: 'test_function_exists', detail: `the script defines no function ${testName}()` });
  } else {
    const body = test.childForFieldName('body') ?? test;
    // A method may be exercised through its class's constructor (e.g. a reset called by __init__).
    const owner = input.functionName.includes('.') ? input.functionName.split('.').slice(-2, -1)[0]! : undefined;
    const literal = (name: string) => callsTo(body, name).length > 0;
    const reach = input.testCalls === 'reachable' ? new TestReach(root) : undefined;
    const reaches = (name: string) => literal(name) || (reach?.reaches(test, name) ?? false);
    const how = reach ? 'never reaches a call of' : 'never calls';
    const callsTarget = reaches(simple) || (owner !== undefined && literal(owner));
    if (!callsTarget) failures.push({ check: 'test_calls_target', detail: `${testName} ${how} ${simple}` });
    if (!reaches(newImpl)) failures.push({ check: 'test_calls_new_implementation', detail: `${testName} ${how} ${newImpl}` });
    const asserts = body.descendantsOfType('assert_statement').length;
    measures.assertions = asserts;
    if (asserts < MIN_TEST_ASSERTIONS) failures.push({ check: 'test_has_assertions', detail: `${testName} has ${asserts} assert statement(s), fewer than ${MIN_TEST_ASSERTIONS}` });
  }

  const mains = root.namedChildren.filter(isMainGuard);
  checkTestsReadBehaviour(root, [simple, newImpl], test ? [test] : [], mains, failures);
  if (mains.length === 0) {
    failures.push({ check: 'main_block_exists', detail: 'the script has no if __name__ == "__main__": block' });
  } else {
    const calls = mains.flatMap((m) => callsTo(m, testName));
    if (calls.length === 0) {
      failures.push({ check: 'main_calls_test', detail: `the __main__ block never calls ${testName}()` });
    } else {
      const guarded = calls.filter((call) => {
        for (let n: Node | null = call.parent; n && !isMainGuard(n); n = n.parent) if (n.type === 'try_statement') return true;
        return false;
      });
      // One unguarded call is enough for a failing test to fail the run.
      if (guarded.length === calls.length) failures.push({ check: 'main_call_not_in_try', detail: `the __main__ block calls ${testName}() only inside try/except, hiding failures` });
    }
  }
  return { passed: failures.length === 0, failures, measures };
}

/**
 * A whole class (a class environment): the class of the repository, the methods it has. A class
 * may lose at most `MAX_FUNCTION_TOKEN_LOSS` tokens per method in the script (RepoST's allowance
 * for one function, once for each of them).
 */
interface ClassCheckInput {
  className: string;
  /** The class as it is in the repository. */
  originalClass: string;
  /** How many methods it has (the token allowance). */
  methods: number;
}

function checkClassTarget(root: Node, input: ClassCheckInput, failures: SanityFailure[], measures: Record<string, number>): void {
  const target = findClassDefinition(root, input.className);
  if (!target) {
    failures.push({ check: 'target_exists', detail: `the script defines no top-level class ${input.className}` });
    return;
  }
  const original = countCodeTokens(input.originalClass);
  const sandboxed = leaves(target).length;
  const allowed = MAX_FUNCTION_TOKEN_LOSS * Math.max(1, input.methods);
  measures.originalClassTokens = original;
  measures.sandboxedClassTokens = sandboxed;
  if (sandboxed < original - allowed) {
    failures.push({ check: 'target_not_shrunk', detail: `class ${input.className} has ${sandboxed} tokens in the script but ${original} in the repository (more than ${allowed} fewer)` });
  }
}

function checkClassScript(input: ClassCheckInput & { script: string }): ParsedScript {
  return parsedScript(input.script, (root, failures, measures) => checkClassTarget(root, input, failures, measures));
}

/** Table 11 for a class: the script parses, keeps the class whole and keeps the context it was given. */
export function checkClassSandboxScript(input: ClassCheckInput & { script: string; context: string }): SanityReport {
  const { root, failures, measures } = checkClassScript(input);
  const scriptTokens = leaves(root).length;
  const contextTokens = countCodeTokens(input.context);
  measures.scriptTokens = scriptTokens;
  measures.contextTokens = contextTokens;
  if (scriptTokens < contextTokens - MAX_SCRIPT_TOKEN_LOSS) {
    failures.push({ check: 'script_keeps_context', detail: `the script has ${scriptTokens} tokens but the code it was given has ${contextTokens} (more than ${MAX_SCRIPT_TOKEN_LOSS} fewer)` });
  }
  return { passed: failures.length === 0, failures, measures };
}

/** The test functions of a script: its top-level functions named `test...`, in source order. */
export function testFunctionsOf(root: Node): Node[] {
  return definitionsIn(root).filter((d) => d.type === 'function_definition' && /^test/.test(d.childForFieldName('name')?.text ?? ''));
}

/** The names of a script's test functions (the tests a class's per-test pass rate counts). */
export function testFunctionNames(script: string): string[] {
  return testFunctionsOf(parse(script).rootNode).map((d) => d.childForFieldName('name')!.text);
}

/**
 * Table 12 for a class: test functions that build objects of the class and of its copy and
 * assert (at least three asserts in all), every one of them called from the `__main__` block,
 * not only inside try/except.
 */
export function checkClassTestScript(input: ClassCheckInput & { script: string; /** The script the tests were added to. */ sandboxScript: string }): SanityReport {
  const { root, failures, measures } = checkClassScript(input);
  const scriptTokens = leaves(root).length;
  const sandboxTokens = countCodeTokens(input.sandboxScript);
  measures.scriptTokens = scriptTokens;
  measures.sandboxScriptTokens = sandboxTokens;
  if (scriptTokens < sandboxTokens) {
    failures.push({ check: 'script_not_shrunk', detail: `the script with tests has ${scriptTokens} tokens, fewer than the ${sandboxTokens} of the sandboxed script` });
  }
  const copy = newImplementationName(input.className);
  const tests = testFunctionsOf(root);
  measures.testFunctions = tests.length;
  if (tests.length === 0) {
    failures.push({ check: 'test_function_exists', detail: 'the script defines no test function (a top-level function named test_...)' });
  } else {
    const bodies = tests.map((t) => t.childForFieldName('body') ?? t);
    if (!bodies.some((b) => callsTo(b, input.className).length > 0)) failures.push({ check: 'test_calls_target', detail: `no test function builds a ${input.className}` });
    if (!bodies.some((b) => callsTo(b, copy).length > 0)) failures.push({ check: 'test_calls_new_implementation', detail: `no test function builds a ${copy}` });
    const asserts = bodies.reduce((n, b) => n + b.descendantsOfType('assert_statement').length, 0);
    measures.assertions = asserts;
    if (asserts < MIN_TEST_ASSERTIONS) failures.push({ check: 'test_has_assertions', detail: `the test functions have ${asserts} assert statement(s) in all, fewer than ${MIN_TEST_ASSERTIONS}` });
  }
  const mains = root.namedChildren.filter(isMainGuard);
  checkTestsReadBehaviour(root, [input.className, copy], tests, mains, failures);
  if (mains.length === 0) {
    failures.push({ check: 'main_block_exists', detail: 'the script has no if __name__ == "__main__": block' });
  } else if (tests.length > 0) {
    const names = tests.map((t) => t.childForFieldName('name')!.text);
    const unguarded = (name: string) =>
      mains
        .flatMap((m) => callsTo(m, name))
        .some((call) => {
          for (let n: Node | null = call.parent; n && !isMainGuard(n); n = n.parent) if (n.type === 'try_statement') return false;
          return true;
        });
    const uncalled = names.filter((n) => mains.every((m) => callsTo(m, n).length === 0));
    if (uncalled.length) failures.push({ check: 'main_calls_test', detail: `the __main__ block never calls ${uncalled.join(', ')}` });
    const guarded = names.filter((n) => !uncalled.includes(n) && !unguarded(n));
    if (guarded.length) failures.push({ check: 'main_call_not_in_try', detail: `the __main__ block calls ${guarded.join(', ')} only inside try/except, hiding failures` });
  }
  return { passed: failures.length === 0, failures, measures };
}
