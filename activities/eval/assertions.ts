/**
 * The assertions of an evaluation script: which one a failing run stopped at, and the script
 * without some of them.
 *
 * An assertion is a statement that checks: `assert ...`, or a call of an `assert*` function as a
 * statement (`self.assertEqual(...)`, `np.testing.assert_allclose(...)`). A run of a candidate
 * fails at an assertion when the traceback of its failure passes through one: the innermost frame
 * in the script whose line lies in an assertion of the script's own code (the candidate's code
 * and preamble are not the script's). The run's script holds the candidate, so its lines are not
 * the record's: an assertion is matched to the record's script by where it sits (the functions
 * and classes around it), its text, and its place among the assertions there with the same text.
 * Only the traceback's frame lines are read from the run's output, and each is checked against
 * the script's own syntax tree: a line that holds no assertion names none.
 */
import type { SyntaxNode } from '../python-parser';
import { parsePython } from './function-source';

/** An assertion of a script: the 1-based line where its statement starts, and its source text. */
export interface ScriptAssertion {
  line: number;
  text: string;
}

/** The file name the sandbox gives the script it runs (tracebacks name it). */
export const SCRIPT_FILE = 'eval_script.py';

/** Longest assertion text carried in a payload; a removal matches the statement by its start. */
export const ASSERTION_TEXT_CHARS = 300;

const FRAME = /^\s*File "([^"\n]*)", line (\d+), in (.+)$/;

/** The script's frames in a Python traceback, outermost first. */
export function scriptFrames(traceback: string, scriptFile = SCRIPT_FILE): { line: number; name: string }[] {
  const frames: { line: number; name: string }[] = [];
  for (const l of traceback.split('\n')) {
    const m = FRAME.exec(l);
    if (!m) continue;
    const file = m[1]!;
    if (file !== scriptFile && !file.endsWith(`/${scriptFile}`)) continue;
    frames.push({ line: Number(m[2]), name: m[3]!.trim() });
  }
  return frames;
}

/** Whether a statement checks something: `assert ...`, or a call of an `assert*` function. */
export function isAssertion(node: SyntaxNode): boolean {
  if (node.type === 'assert_statement') return true;
  if (node.type !== 'expression_statement' || node.namedChildCount !== 1) return false;
  const call = node.namedChildren[0]!;
  if (call.type !== 'call') return false;
  const fn = call.childForFieldName('function');
  const name = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.type === 'identifier' ? fn.text : undefined;
  return name !== undefined && /^assert/i.test(name);
}

/** Every assertion statement of a tree, in source order. */
export function assertionsIn(root: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  const walk = (n: SyntaxNode) => {
    if (isAssertion(n)) {
      out.push(n);
      return;
    }
    for (const c of n.namedChildren) walk(c);
  };
  walk(root);
  return out;
}

/** The functions and classes around a node, outermost first (`TestX.test_y`). */
function scopeOf(node: SyntaxNode): string {
  const names: string[] = [];
  for (let p = node.parent; p; p = p.parent) {
    if (p.type === 'function_definition' || p.type === 'class_definition') names.unshift(p.childForFieldName('name')?.text ?? '?');
  }
  return names.join('.');
}

/** Each assertion keyed by where it sits, its text and its place among the same text there. */
function keyed(root: SyntaxNode): Map<string, SyntaxNode> {
  const seen = new Map<string, number>();
  const out = new Map<string, SyntaxNode>();
  for (const a of assertionsIn(root)) {
    const base = `${scopeOf(a)}\u0000${a.text}`;
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.set(`${base}\u0000${n}`, a);
  }
  return out;
}

const asAssertion = (node: SyntaxNode): ScriptAssertion => ({ line: node.startPosition.row + 1, text: node.text.slice(0, ASSERTION_TEXT_CHARS) });

/**
 * The record's assertion a failing run stopped at: the innermost frame of the run's script whose
 * line lies in an assertion that is also the record's (not the candidate's own code), mapped to the
 * record's script. Null when no frame passes through one (a crash outside any assertion, a timeout).
 */
export function failingAssertion(runScript: string, recordScript: string, traceback: string): ScriptAssertion | null {
  const frames = scriptFrames(traceback);
  if (frames.length === 0) return null;
  const runKeys = keyed(parsePython(runScript).rootNode);
  const recordKeys = keyed(parsePython(recordScript).rootNode);
  const byNode = new Map([...runKeys].map(([k, n]) => [n.id, k]));
  const runAssertions = [...runKeys.values()];
  for (const frame of [...frames].reverse()) {
    const row = frame.line - 1;
    const hit = runAssertions.find((a) => a.startPosition.row <= row && row <= a.endPosition.row);
    if (!hit) continue;
    const mine = recordKeys.get(byNode.get(hit.id)!);
    if (mine) return asAssertion(mine);
  }
  return null;
}

export type Removal = { ok: true; script: string; removed: ScriptAssertion[] } | { ok: false; reason: string };

const isTestFunction = (def: SyntaxNode) => {
  if (!/^test/i.test(def.childForFieldName('name')?.text ?? '')) return false;
  const cls = def.parent?.parent;
  return !cls || cls.type !== 'class_definition' || /^Test/.test(cls.childForFieldName('name')?.text ?? '') || /TestCase/.test(cls.childForFieldName('superclasses')?.text ?? '');
};

/** The script's functions (at any depth) by simple name. */
function functionsByName(root: SyntaxNode): Map<string, SyntaxNode[]> {
  const out = new Map<string, SyntaxNode[]>();
  for (const def of root.descendantsOfType('function_definition')) {
    const name = def.childForFieldName('name')?.text;
    if (name) out.set(name, [...(out.get(name) ?? []), def]);
  }
  return out;
}

/** Simple names a node calls (`f(...)`, `obj.f(...)`). */
function calledNames(node: SyntaxNode): string[] {
  return node.descendantsOfType('call').flatMap((call) => {
    const fn = call.childForFieldName('function');
    if (fn?.type === 'identifier') return [fn.text];
    if (fn?.type === 'attribute') return [fn.childForFieldName('attribute')?.text ?? ''];
    return [];
  });
}

/**
 * A test function and the script's functions it calls (transitively, by name), leaving out the
 * code under test (`exclude`: the target and its new implementation): the code whose assertions
 * are the test's, wherever they are written.
 */
function testCode(def: SyntaxNode, byName: Map<string, SyntaxNode[]>, exclude: ReadonlySet<string>): SyntaxNode[] {
  const seen = new Map<number, SyntaxNode>();
  const queue = [def];
  while (queue.length) {
    const node = queue.pop()!;
    if (seen.has(node.id)) continue;
    seen.set(node.id, node);
    for (const name of calledNames(node)) if (!exclude.has(name)) queue.push(...(byName.get(name) ?? []));
  }
  return [...seen.values()];
}

/** The distinct assertions of some code (a helper nested in a test is counted once). */
function assertionsOf(code: SyntaxNode[]): SyntaxNode[] {
  const found = new Map<number, SyntaxNode>();
  for (const node of code) for (const a of assertionsIn(node.childForFieldName('body') ?? node)) found.set(a.id, a);
  return [...found.values()];
}

/** Test functions (top level, or methods of test classes) and the assertions each reaches: its own and its helpers'. */
function assertionsPerTest(root: SyntaxNode, exclude: ReadonlySet<string>): Map<string, SyntaxNode[]> {
  const out = new Map<string, SyntaxNode[]>();
  const byName = functionsByName(root);
  for (const def of root.descendantsOfType('function_definition')) {
    if (!isTestFunction(def)) continue;
    const name = `${scopeOf(def) ? `${scopeOf(def)}.` : ''}${def.childForFieldName('name')!.text}`;
    out.set(name, [...(out.get(name) ?? []), ...assertionsOf(testCode(def, byName, exclude))]);
  }
  return out;
}

/**
 * Whether an assertion checks what the code under test gave: its expression uses a call of (or a
 * reference to) one of `names`, or a name the surrounding function bound from one (through
 * assignments, loops and `with`, and parameters of a helper some call handed such a value to).
 */
function checksResult(assertion: SyntaxNode, names: ReadonlySet<string>, tainted: ReadonlyMap<number, ReadonlySet<string>>): boolean {
  let fn: SyntaxNode | null = assertion.parent;
  while (fn && fn.type !== 'function_definition' && fn.type !== 'lambda') fn = fn.parent;
  const bound = fn ? (tainted.get(fn.id) ?? new Set<string>()) : new Set<string>();
  return usesAny(assertion, names, bound);
}

function usesAny(node: SyntaxNode, names: ReadonlySet<string>, bound: ReadonlySet<string>): boolean {
  for (const id of [node, ...node.descendantsOfType(['identifier'])]) {
    if (id.type !== 'identifier') continue;
    if (names.has(id.text) || bound.has(id.text)) return true;
  }
  return false;
}

/** For each function of the script: the names in it that hold a value from the code under test. */
function taintedNames(root: SyntaxNode, names: ReadonlySet<string>): Map<number, Set<string>> {
  const out = new Map<number, Set<string>>();
  const byName = functionsByName(root);
  const defs = root.descendantsOfType('function_definition');
  const get = (def: SyntaxNode) => out.get(def.id) ?? out.set(def.id, new Set()).get(def.id)!;
  // Until nothing changes: assignments and loops inside a function, then the parameters of the
  // script's functions a tainted value is handed to (bounded: each pass only adds names).
  for (let pass = 0; pass < 20; pass++) {
    let changed = false;
    const add = (def: SyntaxNode, name: string) => {
      const set = get(def);
      if (!set.has(name)) {
        set.add(name);
        changed = true;
      }
    };
    for (const def of defs) {
      const body = def.childForFieldName('body');
      if (!body) continue;
      const bound = get(def);
      for (const node of body.descendantsOfType(['assignment', 'augmented_assignment', 'for_statement', 'for_in_clause', 'with_item'])) {
        const left = node.type === 'with_item' ? node.descendantsOfType('as_pattern_target')[0] : node.childForFieldName('left');
        const right = node.type === 'with_item' ? node.childForFieldName('value') : node.childForFieldName('right');
        if (!left || !right || !usesAny(right, names, bound)) continue;
        for (const id of [left, ...left.descendantsOfType('identifier')]) if (id.type === 'identifier') add(def, id.text);
      }
      for (const call of body.descendantsOfType('call')) {
        const args = call.childForFieldName('arguments');
        if (!args || !usesAny(args, names, bound)) continue;
        const fn = call.childForFieldName('function');
        const callee = fn?.type === 'identifier' ? fn.text : fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
        for (const target of callee && !names.has(callee) ? (byName.get(callee) ?? []) : []) {
          const params = target.childForFieldName('parameters');
          for (const id of params?.descendantsOfType('identifier') ?? []) add(target, id.text);
        }
      }
    }
    if (!changed) break;
  }
  return out;
}

const onItsOwnLines = (script: string, node: SyntaxNode) => {
  const lineStart = script.lastIndexOf('\n', node.startIndex - 1) + 1;
  const lineEnd = script.indexOf('\n', node.endIndex);
  const after = script.slice(node.endIndex, lineEnd < 0 ? script.length : lineEnd);
  return script.slice(lineStart, node.startIndex).trim() === '' && /^\s*(#.*)?$/.test(after);
};

/**
 * The script without the given assertions. A statement alone on its lines goes with its lines;
 * one sharing a line (`x = f(); assert x`) goes with its `;`; a block left without a statement
 * gets `pass`. Refused, with the reason, when an assertion is not where it is said to be, when the
 * result does not parse, when a test function would be left without any assertion (it would
 * check nothing; a test's assertions are its own and those of the script's functions it calls,
 * so one removed from a helper counts like one in the test), or, given the target's name
 * (`Class.method` or `name`), when no assertion of the tests would be left on what the target or
 * its new implementation gives. What is returned is always a script that still tests the target.
 */
export function removeAssertions(script: string, assertions: readonly ScriptAssertion[], target?: string): Removal {
  const root = parsePython(script).rootNode;
  const all = assertionsIn(root);
  const nodes: SyntaxNode[] = [];
  for (const a of assertions) {
    const node = all.find((n) => n.startPosition.row + 1 === a.line && n.text.startsWith(a.text));
    if (!node) return { ok: false, reason: `line ${a.line} holds no assertion \`${a.text.slice(0, 80)}\`` };
    if (!nodes.some((n) => n.id === node.id)) nodes.push(node);
  }
  if (nodes.length === 0) return { ok: true, script, removed: [] };
  const edits: { start: number; end: number; text: string }[] = [];
  const byBlock = new Map<number, SyntaxNode[]>();
  for (const n of nodes) byBlock.set(n.parent!.id, [...(byBlock.get(n.parent!.id) ?? []), n]);
  for (const group of byBlock.values()) {
    const block = group[0]!.parent!;
    const statements = block.namedChildren.filter((c) => c.type !== 'comment');
    const emptied = statements.every((s) => group.some((g) => g.id === s.id));
    group.forEach((node, i) => {
      if (emptied && i === 0) {
        edits.push({ start: node.startIndex, end: node.endIndex, text: 'pass' });
        return;
      }
      if (onItsOwnLines(script, node)) {
        const start = script.lastIndexOf('\n', node.startIndex - 1) + 1;
        const nl = script.indexOf('\n', node.endIndex);
        edits.push({ start, end: nl < 0 ? script.length : nl + 1, text: '' });
        return;
      }
      const prev = node.previousSibling;
      const semicolonBefore = prev && prev.type === ';' ? prev : null;
      if (semicolonBefore) edits.push({ start: semicolonBefore.startIndex, end: node.endIndex, text: '' });
      else {
        const next = node.nextSibling;
        edits.push({ start: node.startIndex, end: next && next.type === ';' ? next.endIndex : node.endIndex, text: '' });
      }
    });
  }
  let out = script;
  for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  const after = parsePython(out).rootNode;
  if (after.hasError) return { ok: false, reason: 'the script does not parse once they are removed' };
  const simple = target?.split('.').pop();
  const underTest = new Set(simple ? [simple, `${simple}_new_implementation`] : []);
  const before = assertionsPerTest(root, underTest);
  const left = assertionsPerTest(after, underTest);
  const empty = [...before].filter(([name, a]) => a.length > 0 && (left.get(name) ?? []).length === 0).map(([name]) => name);
  if (empty.length > 0) return { ok: false, reason: `${empty.join(', ')} would be left without an assertion` };
  if (assertionsIn(after).length === 0) return { ok: false, reason: 'the script would be left without an assertion' };
  if (simple) {
    const tainted = taintedNames(after, underTest);
    // Without test functions (tests written in the `__main__` block), every assertion outside the code under test.
    const inCodeUnderTest = (a: SyntaxNode) => {
      for (let p = a.parent; p; p = p.parent) if (p.type === 'function_definition' && underTest.has(p.childForFieldName('name')?.text ?? '')) return true;
      return false;
    };
    const pool = left.size > 0 ? [...left.values()].flat() : assertionsIn(after).filter((a) => !inCodeUnderTest(a));
    const onResult = pool.some((a) => checksResult(a, underTest, tainted));
    if (!onResult) return { ok: false, reason: `no assertion on what ${simple} gives would be left` };
  }
  return { ok: true, script: out, removed: nodes.map(asAssertion) };
}

/** Longest test source shown to the judge. */
const TEST_SOURCE_CHARS = 6000;

/**
 * What the judge is shown around an assertion: the innermost function holding it (its test), or,
 * for an assertion outside any function, the lines around it; cut to a bounded length.
 */
export function testSourceOf(script: string, line: number): string {
  const root = parsePython(script).rootNode;
  const row = line - 1;
  let best: SyntaxNode | null = null;
  for (const def of root.descendantsOfType('function_definition')) {
    if (def.startPosition.row <= row && row <= def.endPosition.row && (!best || def.startIndex >= best.startIndex)) best = def;
  }
  let text: string;
  if (best) {
    const outer = best.parent?.type === 'decorated_definition' ? best.parent : best;
    const lineStart = script.lastIndexOf('\n', outer.startIndex - 1) + 1;
    text = script.slice(lineStart, outer.endIndex);
  } else {
    const lines = script.split('\n');
    text = lines.slice(Math.max(0, row - 10), row + 11).join('\n');
  }
  return text.length <= TEST_SOURCE_CHARS ? text : `${text.slice(0, TEST_SOURCE_CHARS)}\n# ... (cut)`;
}
