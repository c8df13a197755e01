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

/** Test functions (top level, or methods of test classes) and how many assertions each holds. */
function assertionsPerTest(root: SyntaxNode): Map<string, number> {
  const out = new Map<string, number>();
  for (const def of root.descendantsOfType('function_definition')) {
    if (!isTestFunction(def)) continue;
    const name = `${scopeOf(def) ? `${scopeOf(def)}.` : ''}${def.childForFieldName('name')!.text}`;
    out.set(name, (out.get(name) ?? 0) + assertionsIn(def.childForFieldName('body')!).length);
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
 * result does not parse, or when a test function would be left without any assertion (it would
 * check nothing), so what is returned is always a script that still tests.
 */
export function removeAssertions(script: string, assertions: readonly ScriptAssertion[]): Removal {
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
  const before = assertionsPerTest(root);
  const left = assertionsPerTest(after);
  const empty = [...before].filter(([name, n]) => n > 0 && (left.get(name) ?? 0) === 0).map(([name]) => name);
  if (empty.length > 0) return { ok: false, reason: `${empty.join(', ')} would be left without an assertion` };
  if (assertionsIn(after).length === 0) return { ok: false, reason: 'the script would be left without an assertion' };
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
