/**
 * tree-sitter parsing of Python 3 source. tree-sitter is error-tolerant and its grammar still
 * accepts a few Python 2 forms (`print x`, `exec code`, `<>`), so "parses" here means what
 * CPython 3 accepts: any error node, missing node or Python-2-only construct makes the file
 * a skip with a reason, in agreement with Python's own `ast` module.
 */
import type Parser from 'tree-sitter';
import { createPythonParser } from '../python-parser';

export type SyntaxNode = Parser.SyntaxNode;
export type Tree = Parser.Tree;
export type TreeCursor = Parser.TreeCursor;

let parser: Parser | null = null;

function getParser(): Parser {
  if (!parser) {
    parser = createPythonParser();
  }
  return parser;
}

/** Node types the grammar keeps only for Python 2 source. */
const PYTHON2_NODES = ['print_statement', 'exec_statement'];

export type ParseResult = { ok: true; tree: Tree } | { ok: false; reason: string };

export function parsePython(text: string): ParseResult {
  const tree = getParser().parse(text);
  const root = tree.rootNode;
  if (root.hasError) {
    const bad = firstError(root);
    const where = bad ? ` at line ${bad.startPosition.row + 1}` : '';
    return { ok: false, reason: `syntax error${where} (not valid Python 3)` };
  }
  // The node searches below walk the whole tree, so they run only when the text suggests them.
  const py2 = /\b(print|exec)\b/.test(text) ? root.descendantsOfType(PYTHON2_NODES).filter(isPython2Only) : [];
  if (py2.length > 0) {
    const n = py2[0]!;
    return { ok: false, reason: `syntax error at line ${n.startPosition.row + 1}: Python 2 ${n.type.replace('_statement', '')} statement` };
  }
  for (const op of text.includes('<>') ? root.descendantsOfType('comparison_operator') : []) {
    for (const child of op.children) {
      if (child.type === '<>') return { ok: false, reason: `syntax error at line ${child.startPosition.row + 1}: Python 2 '<>' operator` };
    }
  }
  for (const lit of /\b0\d|\d[lL]\b/.test(text) ? root.descendantsOfType('integer') : []) {
    // Python 2 octal literals (0777) and long suffixes (10L) are errors in Python 3.
    if (/^0\d*[1-9]\d*$/.test(lit.text) || /[lL]$/.test(lit.text)) {
      return { ok: false, reason: `syntax error at line ${lit.startPosition.row + 1}: Python 2 integer literal ${lit.text}` };
    }
  }
  const legacy = python2Construct(root, text);
  if (legacy) return { ok: false, reason: `syntax error at line ${legacy.node.startPosition.row + 1}: Python 2 ${legacy.what}` };
  return { ok: true, tree };
}

/** Python 2 forms the grammar accepts silently; each search is guarded by a cheap text test. */
function python2Construct(root: SyntaxNode, text: string): { node: SyntaxNode; what: string } | null {
  if (/except[^:\n]*,/.test(text)) {
    for (const n of root.descendantsOfType('except_clause')) if (n.childrenForFieldName('value').length > 1) return { node: n, what: "'except E, name' clause" };
  }
  if (/\braise\b[^\n]*,/.test(text)) {
    for (const n of root.descendantsOfType('raise_statement')) if (n.firstNamedChild?.type === 'expression_list') return { node: n, what: "'raise E, message' statement" };
  }
  if (text.includes('`') || /\b[uU][rR]['"]/.test(text)) {
    for (const n of root.descendantsOfType('string_start')) {
      if (n.text === '`') return { node: n, what: 'backtick repr' };
      if (/^[uU][rR]/.test(n.text)) return { node: n, what: `${n.text.replace(/['"]+$/, '')} string prefix` };
    }
  }
  if (/\bdef\s+\w+\s*\([^)]*\(|\blambda[^:\n]*\(/.test(text)) {
    for (const n of root.descendantsOfType('tuple_pattern')) {
      const parent = n.parent?.type;
      if (parent === 'parameters' || parent === 'lambda_parameters' || parent === 'default_parameter') return { node: n, what: 'tuple parameter' };
    }
  }
  return null;
}

/**
 * `print >> f, x` and `print (x), y` are valid Python 3 expressions that the grammar still reads
 * as Python 2 print statements; only the other forms are real Python 2.
 */
function isPython2Only(node: SyntaxNode): boolean {
  if (node.type !== 'print_statement') return true;
  if (node.namedChildren.some((c) => c.type === 'chevron')) return false;
  const first = node.namedChild(0);
  return !(first && first.type === 'parenthesized_expression' && first.startIndex === node.startIndex + 'print'.length);
}

/** The smallest error node, or the first missing one: the best guess of where the syntax error is. */
function firstError(node: SyntaxNode): SyntaxNode | null {
  const errors = node.descendantsOfType('ERROR');
  if (errors.length > 0) return errors.reduce((best, e) => (e.endIndex - e.startIndex < best.endIndex - best.startIndex ? e : best));
  const missing = (n: SyntaxNode): SyntaxNode | null => {
    if (n.isMissing) return n;
    for (const c of n.children) {
      if (!c.hasError && !c.isMissing) continue;
      const found = missing(c);
      if (found) return found;
    }
    return null;
  };
  return missing(node);
}
