/**
 * tree-sitter parsing of Python 3 source. tree-sitter is error-tolerant and its grammar still
 * accepts a few Python 2 forms (`print x`, `exec code`, `<>`), so "parses" here means what
 * CPython 3 accepts: any error node, missing node or Python-2-only construct makes the file
 * a skip with a reason, in agreement with Python's own `ast` module.
 */
import Parser from 'tree-sitter';
import Python from 'tree-sitter-python';

export type SyntaxNode = Parser.SyntaxNode;
export type Tree = Parser.Tree;

let parser: Parser | null = null;

function getParser(): Parser {
  if (!parser) {
    parser = new Parser();
    parser.setLanguage(Python as unknown as Parser.Language);
  }
  return parser;
}

/** Node types the grammar keeps only for Python 2 source. */
const PYTHON2_NODES = ['print_statement', 'exec_statement'];

export type ParseResult = { ok: true; tree: Tree } | { ok: false; reason: string };

export function parsePython(text: string): ParseResult {
  // The binding reads the source through a buffer; a generous size avoids its 32 KiB
  // default chunking on large files.
  const tree = getParser().parse(text, undefined, { bufferSize: Math.max(64 * 1024, text.length * 2 + 1024) });
  const root = tree.rootNode;
  if (root.hasError) {
    const bad = firstError(root);
    const where = bad ? ` at line ${bad.startPosition.row + 1}` : '';
    return { ok: false, reason: `syntax error${where} (not valid Python 3)` };
  }
  const py2 = root.descendantsOfType(PYTHON2_NODES);
  if (py2.length > 0) {
    const n = py2[0]!;
    return { ok: false, reason: `syntax error at line ${n.startPosition.row + 1}: Python 2 ${n.type.replace('_statement', '')} statement` };
  }
  for (const op of root.descendantsOfType('comparison_operator')) {
    for (const child of op.children) {
      if (child.type === '<>') return { ok: false, reason: `syntax error at line ${child.startPosition.row + 1}: Python 2 '<>' operator` };
    }
  }
  for (const lit of root.descendantsOfType('integer')) {
    // Python 2 octal literals (0777) and long suffixes (10L) are errors in Python 3.
    if (/^0\d*[1-9]\d*$/.test(lit.text) || /[lL]$/.test(lit.text)) {
      return { ok: false, reason: `syntax error at line ${lit.startPosition.row + 1}: Python 2 integer literal ${lit.text}` };
    }
  }
  return { ok: true, tree };
}

function firstError(node: SyntaxNode): SyntaxNode | null {
  if (node.type === 'ERROR' || node.isMissing) return node;
  if (!node.hasError) return null;
  for (const child of node.children) {
    const found = firstError(child);
    if (found) return found;
  }
  return node;
}
