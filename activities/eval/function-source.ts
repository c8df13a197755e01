/**
 * The parts of a Python function definition the evaluation works with: its header (decorators
 * and signature up to the colon), its docstring and its body. tree-sitter reads the structure;
 * Python itself judges the code when it runs in the sandbox.
 */
import { findDefinition } from '../llm/sanity';
import { createPythonParser, type PythonParser, type SyntaxNode, type Tree } from '../python-parser';
import { dedentLike } from '../sandbox/new-implementation';

let parser: PythonParser | null = null;

export function parsePython(text: string): Tree {
  parser ??= createPythonParser();
  return parser.parse(text, undefined, { bufferSize: Math.max(64 * 1024, text.length * 2 + 1024) });
}

export { dedentLike, findDefinition };

/** The decorated_definition around a function, or the function itself. */
export function outerDefinition(def: SyntaxNode): SyntaxNode {
  return def.parent?.type === 'decorated_definition' ? def.parent : def;
}

/** The `:` that ends the signature (the last one before the body). */
export function signatureColon(def: SyntaxNode): SyntaxNode {
  const body = def.childForFieldName('body')!;
  const colons = def.children.filter((c) => c.type === ':' && c.endIndex <= body.startIndex);
  const colon = colons[colons.length - 1];
  if (!colon) throw new Error('a function definition without a colon');
  return colon;
}

/** The docstring statement of a body (first statement, a string literal), or null. */
export function docstringStatement(def: SyntaxNode): SyntaxNode | null {
  const first = def.childForFieldName('body')?.namedChildren[0];
  if (!first || first.type !== 'expression_statement') return null;
  const expr = first.namedChildren[0];
  return expr && (expr.type === 'string' || expr.type === 'concatenated_string') && first.namedChildCount === 1 ? first : null;
}

/** Indentation of the body's statements (or the definition's plus four spaces for a one-line body). */
export function bodyIndent(def: SyntaxNode, text: string): string {
  const body = def.childForFieldName('body')!;
  const colon = signatureColon(def);
  if (body.startPosition.row > colon.endPosition.row) {
    const lineStart = text.lastIndexOf('\n', body.startIndex - 1) + 1;
    return text.slice(lineStart, body.startIndex).replace(/[^ \t]/g, ' ');
  }
  const lineStart = text.lastIndexOf('\n', outerDefinition(def).startIndex - 1) + 1;
  return `${text.slice(lineStart, outerDefinition(def).startIndex).replace(/[^ \t]/g, ' ')}    `;
}

export interface FunctionParts {
  /** Decorators and signature through the colon, dedented. */
  header: string;
  /** The docstring literal as written (quotes included), or null. */
  docstring: string | null;
  /** The name as defined. */
  name: string;
}

/** The first top-level function of a source (the ground truth as datasets store it). */
export function functionParts(source: string): FunctionParts {
  const text = dedentLike(source);
  const tree = parsePython(text);
  const def = tree.rootNode.namedChildren
    .map((n) => (n.type === 'decorated_definition' ? n.childForFieldName('definition') : n))
    .find((n): n is SyntaxNode => n?.type === 'function_definition');
  if (!def) throw new Error('the source defines no function at its top level');
  const doc = docstringStatement(def);
  return {
    header: text.slice(outerDefinition(def).startIndex, signatureColon(def).endIndex),
    docstring: doc ? doc.text : null,
    name: def.childForFieldName('name')!.text,
  };
}

/** A docstring literal for generated text, indented to sit in a body at `indent`. */
export function docstringLiteral(text: string, indent: string): string {
  const escaped = text.trim().replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"');
  const [first, ...more] = escaped.split('\n');
  if (more.length === 0) return `"""${first}"""`;
  // The lines after the first keep their relative indentation, moved to the body's.
  const common = Math.min(...more.filter((l) => l.trim()).map((l) => /^[ \t]*/.exec(l)![0].length));
  const rest = more.map((l) => (l.trim() ? indent + l.slice(Number.isFinite(common) ? common : 0) : ''));
  return `"""${first}\n${rest.join('\n')}\n${indent}"""`;
}
