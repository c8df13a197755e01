/**
 * A definition taken out of its class, as RepoST's records store a method (`orig_func`): its
 * decorators and `def` at column 0, the body indented relative to them, so the text parses on its
 * own (`ast.parse`). The indentation of the first line is taken off every line of code; a line
 * inside a multi-line string literal (a docstring's continuation, a text block) is left exactly as
 * it is, so no string changes its value and a line the string starts at column 0 stays valid.
 */
import { createPythonParser, type PythonParser, type SyntaxNode } from '../python-parser';

let parser: PythonParser | null = null;

/** 0-based rows of `text` that begin inside a string literal opened on an earlier row. */
function rowsInsideStrings(text: string, rowOffset: number): Set<number> {
  parser ??= createPythonParser();
  const tree = parser.parse(text, undefined, { bufferSize: Math.max(64 * 1024, text.length * 2 + 1024) });
  const inside = new Set<number>();
  const visit = (node: SyntaxNode) => {
    if (node.type === 'string' || node.type === 'concatenated_string') {
      for (let row = node.startPosition.row + 1; row <= node.endPosition.row; row++) inside.add(row - rowOffset);
      return;
    }
    // A node on one row holds no string that spans rows.
    if (node.endPosition.row > node.startPosition.row) for (const child of node.children) visit(child);
  };
  visit(tree.rootNode);
  return inside;
}

export function dedentDefinition(source: string): string {
  const lines = source.replace(/\r\n/g, '\n').split('\n');
  const first = lines.findIndex((l) => l.trim() !== '');
  if (first < 0) return source;
  const indent = /^[ \t]*/.exec(lines[first]!)![0];
  if (!indent) return source;
  // Under an `if` the indented definition is a well-formed block, so its strings are found exactly.
  const strings = rowsInsideStrings(`if True:\n${lines.join('\n')}`, 1);
  return lines
    .map((line, row) => {
      if (strings.has(row)) return line;
      if (line.startsWith(indent)) return line.slice(indent.length);
      // Blank lines and comments may sit further left; code never does.
      return line.trimStart();
    })
    .join('\n');
}
