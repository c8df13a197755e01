/** Small helpers over tree-sitter Python nodes shared by the extraction passes. */
import type { SyntaxNode, TreeCursor } from './parser';

/** Node types whose value is a literal (containers only when their items are). */
export const LITERAL_TYPES = new Set(['string', 'concatenated_string', 'integer', 'float', 'true', 'false', 'none', 'ellipsis', 'list', 'tuple', 'dictionary', 'set']);

/** Statements that contain other statements without opening a new scope. */
export const STATEMENT_CONTAINERS = new Set([
  'module',
  'block',
  'if_statement',
  'elif_clause',
  'else_clause',
  'try_statement',
  'except_clause',
  'except_group_clause',
  'finally_clause',
  'with_statement',
  'for_statement',
  'while_statement',
  'match_statement',
  'case_clause',
]);

/** The function or class node inside a possibly decorated definition. */
export function unwrapDefinition(node: SyntaxNode): SyntaxNode | null {
  if (node.type === 'function_definition' || node.type === 'class_definition') return node;
  if (node.type === 'decorated_definition') return node.childForFieldName('definition');
  return null;
}

/** The node whose span includes the decorators of a definition. */
export function outerNode(def: SyntaxNode): SyntaxNode {
  const parent = def.parent;
  return parent && parent.type === 'decorated_definition' ? parent : def;
}

export function decoratorsOf(def: SyntaxNode): SyntaxNode[] {
  const parent = def.parent;
  if (!parent || parent.type !== 'decorated_definition') return [];
  return parent.namedChildren.filter((c) => c.type === 'decorator');
}

/**
 * Definitions found in a statement list without crossing a scope boundary: compound
 * statements (if/try/with/for/while/match) are looked into, function and class bodies are not.
 */
export function definitionsIn(container: SyntaxNode, out: SyntaxNode[] = []): SyntaxNode[] {
  for (const child of container.namedChildren) {
    const def = unwrapDefinition(child);
    if (def) out.push(def);
    else if (STATEMENT_CONTAINERS.has(child.type)) definitionsIn(child, out);
  }
  return out;
}

/**
 * End row of the last code in a node, ignoring trailing comments that tree-sitter attaches to
 * blocks (CPython's end_lineno stops at the last statement).
 */
export function lastCodeRow(node: SyntaxNode): number {
  for (let child = node.lastChild; child; child = child.previousSibling) {
    const type = child.type;
    // Comments and a dangling backslash continuation are not code (CPython's end_lineno agrees).
    if (type === 'comment' || type === 'line_continuation') continue;
    if (child.childCount > 0 && (STATEMENT_CONTAINERS.has(type) || type === 'function_definition' || type === 'class_definition' || type === 'decorated_definition')) {
      return lastCodeRow(child);
    }
    return child.endPosition.row;
  }
  return node.endPosition.row;
}

/** A string literal's value, roughly as Python would read it (prefix and quotes removed). */
export function stringValue(node: SyntaxNode): string | null {
  if (node.type === 'concatenated_string') {
    const parts = node.namedChildren.map(stringValue);
    return parts.some((p) => p === null) ? null : parts.join('');
  }
  if (node.type !== 'string') return null;
  if (node.namedChildren.some((c) => c.type === 'interpolation')) return null;
  return unquoteString(node.text);
}

/** The value of a string literal's text without interpolations: prefix and quotes removed, escapes read. */
export function unquoteString(literal: string): string | null {
  const m = /^([a-zA-Z]*)('''|"""|'|")([\s\S]*)\2$/.exec(literal);
  if (!m) return null;
  const raw = /r/i.test(m[1]!);
  let body = m[3]!;
  if (!raw) {
    body = body.replace(/\\(\r?\n|\\|'|"|n|t|r)/g, (_s, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c === 'r' ? '\r' : c === '\\' ? '\\' : c === "'" || c === '"' ? c : ''));
  }
  return body;
}

/** inspect.cleandoc: strip the common indentation of all lines but the first, trim blank edges. */
export function cleandoc(doc: string): string {
  const lines = doc.replace(/\t/g, '        ').split('\n');
  let margin = Infinity;
  for (const line of lines.slice(1)) {
    const stripped = line.trimStart();
    if (stripped) margin = Math.min(margin, line.length - stripped.length);
  }
  const out = [lines[0]!.trimStart(), ...lines.slice(1).map((l) => (margin === Infinity ? l : l.slice(margin)).trimEnd())];
  while (out.length && !out[0]) out.shift();
  while (out.length && !out[out.length - 1]) out.pop();
  return out.join('\n');
}

/** The docstring of a module, class or function body, or null. */
export function docstringOf(body: SyntaxNode | null): string | null {
  if (!body) return null;
  let first = body.firstNamedChild;
  while (first && first.type === 'comment') first = first.nextNamedSibling;
  if (!first || first.type !== 'expression_statement' || first.namedChildCount !== 1) return null;
  const value = stringValue(first.namedChild(0)!);
  return value === null ? null : cleandoc(value);
}

// Type and field names by id: the numeric ids cross from native code much more cheaply than
// strings, and a name is looked up once per id (ids belong to the one Python grammar).
const typeNames: string[] = [];
const fieldNames: (string | undefined)[] = [];

/** The type of the node under the cursor (a call, so that TypeScript does not narrow it across moves). */
export function typeAt(cursor: TreeCursor): string {
  const id = cursor.nodeTypeId;
  return typeNames[id] ?? (typeNames[id] = cursor.nodeType);
}

/** The field name of the node under the cursor in its parent, or undefined. */
export function fieldAt(cursor: TreeCursor): string | undefined {
  const id = cursor.currentFieldId as number | undefined;
  if (id === undefined) return undefined;
  return id in fieldNames ? fieldNames[id] : (fieldNames[id] = cursor.currentFieldName);
}

const namedTypeNames: (string | null)[] = [];

/** The type of the node under the cursor if it is a named node, else null (named-ness is per type id). */
export function namedTypeAt(cursor: TreeCursor): string | null {
  const id = cursor.nodeTypeId;
  const known = namedTypeNames[id];
  if (known !== undefined) return known;
  return (namedTypeNames[id] = cursor.nodeIsNamed ? cursor.nodeType : null);
}
