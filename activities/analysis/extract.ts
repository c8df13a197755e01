/**
 * Function and method extraction from one parsed module: module-level functions and the methods
 * of classes at any nesting depth; functions nested in functions are not candidates (they are
 * not reachable by a qualified name).
 */
import type { SyntaxNode, Tree, TreeCursor } from './parser';
import { LITERAL_TYPES, STATEMENT_CONTAINERS, cleandoc, fieldAt, namedTypeAt, typeAt, unquoteString } from './syntax';
import type { FunctionEntry } from './types';

/** A function as found in the tree, before filtering and id assignment. */
export interface ExtractedFunction extends Omit<FunctionEntry, 'kept' | 'droppedBy' | 'id' | 'occurrence'> {
  isAsync: boolean;
  /** Parameter names in order (self/cls included). */
  params: string[];
  /** Names of the enclosing classes, outermost first. */
  classChain: string[];
  /** Base-class expressions of the innermost enclosing class. */
  classBases: string[];
  /** The body does nothing a test could observe (see isTrivialBody). */
  trivialBody: boolean;
  /** The function_definition node, made on first access. */
  readonly node: SyntaxNode;
}

export function splitLines(text: string): string[] {
  return text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

export function parameterNames(params: SyntaxNode | null): string[] {
  if (!params) return [];
  const names: string[] = [];
  for (const p of params.namedChildren) {
    switch (p.type) {
      case 'identifier':
        names.push(p.text);
        break;
      case 'typed_parameter': {
        const id = p.namedChildren.find((c) => c.type === 'identifier' || c.type === 'list_splat_pattern' || c.type === 'dictionary_splat_pattern');
        if (id) names.push(id.text.replace(/^\*+/, ''));
        break;
      }
      case 'default_parameter':
      case 'typed_default_parameter': {
        const n = p.childForFieldName('name');
        if (n) names.push(n.text);
        break;
      }
      case 'list_splat_pattern':
      case 'dictionary_splat_pattern': {
        const id = p.namedChildren.find((c) => c.type === 'identifier');
        if (id) names.push(id.text);
        break;
      }
      default:
        break; // '*' and '/' separators
    }
  }
  return names;
}

export function signatureOf(def: SyntaxNode, text: string): string {
  const body = def.childForFieldName('body');
  return normalizeSignature(text.slice(def.startIndex, body ? body.startIndex : def.endIndex));
}

/** The first child of the cursor's node with this field name; the cursor is left on it (true) or where it was (false). */
function gotoField(cursor: TreeCursor, field: string): boolean {
  if (!cursor.gotoFirstChild()) return false;
  do {
    if (fieldAt(cursor) === field) return true;
  } while (cursor.gotoNextSibling());
  cursor.gotoParent();
  return false;
}

/** Text of the node under the cursor: a slice of the source, no node object needed. */
function cursorText(cursor: TreeCursor, text: string): string {
  return text.slice(cursor.startIndex, cursor.endIndex);
}

function namedChildCountAt(cursor: TreeCursor): number {
  let n = 0;
  if (!cursor.gotoFirstChild()) return 0;
  do if (cursor.nodeIsNamed) n++;
  while (cursor.gotoNextSibling());
  cursor.gotoParent();
  return n;
}

/** Moves to the first named child (true), or stays (false). */
function gotoFirstNamedChild(cursor: TreeCursor): boolean {
  return firstNamed(cursor) !== null;
}

function gotoNextNamedSibling(cursor: TreeCursor): boolean {
  return nextNamed(cursor) !== null;
}

/** Moves to the first named child and returns its type, or stays and returns null. */
function firstNamed(cursor: TreeCursor): string | null {
  if (!cursor.gotoFirstChild()) return null;
  do {
    const type = namedTypeAt(cursor);
    if (type !== null) return type;
  } while (cursor.gotoNextSibling());
  cursor.gotoParent();
  return null;
}

/** Moves to the next named sibling and returns its type, or returns null (the cursor is then on the last sibling). */
function nextNamed(cursor: TreeCursor): string | null {
  while (cursor.gotoNextSibling()) {
    const type = namedTypeAt(cursor);
    if (type !== null) return type;
  }
  return null;
}

/** stringValue() of the node under the cursor (the cursor ends where it started). */
function stringValueAt(cursor: TreeCursor, text: string): string | null {
  const type = typeAt(cursor);
  if (type === 'concatenated_string') {
    const parts: (string | null)[] = [];
    if (gotoFirstNamedChild(cursor)) {
      do parts.push(stringValueAt(cursor, text));
      while (gotoNextNamedSibling(cursor));
      cursor.gotoParent();
    }
    return parts.some((p) => p === null) ? null : parts.join('');
  }
  if (type !== 'string') return null;
  const literal = cursorText(cursor, text);
  // An interpolation needs a brace: most strings are told apart without visiting their parts.
  if (literal.includes('{') && gotoFirstNamedChild(cursor)) {
    let interpolated = false;
    do if (typeAt(cursor) === 'interpolation') interpolated = true;
    while (!interpolated && gotoNextNamedSibling(cursor));
    cursor.gotoParent();
    if (interpolated) return null;
  }
  return unquoteString(literal);
}

/** docstringOf() of the body under the cursor, plus its first statements for isTrivialBody. */
function bodySummary(cursor: TreeCursor, text: string): { docstring: string | null; trivial: boolean } {
  // Statements other than comments, at most three (only the first two matter).
  const stmts: { type: string; namedCount: number; literal: boolean; text: string }[] = [];
  let docstring: string | null = null;
  let type = firstNamed(cursor);
  if (type !== null) {
    do {
      if (type === 'comment') continue;
      let namedCount = 0;
      let literal = false;
      let firstValue: string | null = null;
      const first = stmts.length === 0;
      // Only expression and return statements are judged by their children (one child or more than one).
      const childType = type === 'expression_statement' || type === 'return_statement' ? firstNamed(cursor) : null;
      if (childType !== null) {
        namedCount = 1;
        literal = isLiteralAt(cursor, childType);
        if (first && type === 'expression_statement') firstValue = stringValueAt(cursor, text);
        if (nextNamed(cursor) !== null) namedCount++;
        cursor.gotoParent();
      }
      if (first && type === 'expression_statement' && namedCount === 1 && firstValue !== null) docstring = cleandoc(firstValue);
      stmts.push({ type, namedCount, literal, text: type === 'raise_statement' ? cursorText(cursor, text) : '' });
    } while (stmts.length < 3 && (type = nextNamed(cursor)) !== null);
    cursor.gotoParent();
  }
  if (docstring !== null) stmts.shift();
  let trivial = false;
  if (stmts.length === 0) trivial = true;
  else if (stmts.length === 1) {
    const s = stmts[0]!;
    if (s.type === 'pass_statement') trivial = true;
    else if (s.type === 'expression_statement') trivial = s.namedCount === 1 && s.literal;
    else if (s.type === 'return_statement') trivial = s.namedCount === 0 || s.literal;
    else if (s.type === 'raise_statement') trivial = /NotImplemented/.test(s.text);
  }
  return { docstring, trivial };
}

/** isLiteral() of the node under the cursor. */
function isLiteralAt(cursor: TreeCursor, type: string): boolean {
  if (!LITERAL_TYPES.has(type)) return false;
  if (type === 'list' || type === 'tuple' || type === 'dictionary' || type === 'set') {
    // A container is literal only when its items are (a dictionary's pairs are checked shallowly).
    let all = true;
    let t = firstNamed(cursor);
    if (t !== null) {
      do {
        if (!LITERAL_TYPES.has(t) && t !== 'pair') all = false;
      } while (all && (t = nextNamed(cursor)) !== null);
      cursor.gotoParent();
    }
    return all;
  }
  return true;
}

/** parameterNames() of the parameters node under the cursor. */
function parameterNamesAt(cursor: TreeCursor, text: string): string[] {
  const names: string[] = [];
  let paramType = firstNamed(cursor);
  if (paramType === null) return names;
  do {
    switch (paramType) {
      case 'identifier':
        names.push(cursorText(cursor, text));
        break;
      case 'typed_parameter': {
        let t = firstNamed(cursor);
        if (t !== null) {
          do {
            if (t === 'identifier' || t === 'list_splat_pattern' || t === 'dictionary_splat_pattern') {
              names.push(cursorText(cursor, text).replace(/^\*+/, ''));
              break;
            }
          } while ((t = nextNamed(cursor)) !== null);
          cursor.gotoParent();
        }
        break;
      }
      case 'default_parameter':
      case 'typed_default_parameter': {
        if (gotoField(cursor, 'name')) {
          names.push(cursorText(cursor, text));
          cursor.gotoParent();
        }
        break;
      }
      case 'list_splat_pattern':
      case 'dictionary_splat_pattern': {
        let t = firstNamed(cursor);
        if (t !== null) {
          do {
            if (t === 'identifier') {
              names.push(cursorText(cursor, text));
              break;
            }
          } while ((t = nextNamed(cursor)) !== null);
          cursor.gotoParent();
        }
        break;
      }
      default:
        break; // '*' and '/' separators
    }
  } while ((paramType = nextNamed(cursor)) !== null);
  cursor.gotoParent();
  return names;
}

const RETURN_WORD = /\breturn\b/g;

/**
 * Whether the body under the cursor has a `return <value>` of its own: nested functions, classes
 * and lambdas do not count, and expressions cannot hold a return statement. Instead of visiting
 * every statement, each occurrence of the word `return` in the body's text is followed down from
 * the body through statement containers only; a return statement always starts with the word.
 */
function returnsIn(cursor: TreeCursor, text: string): boolean {
  const end = cursor.endIndex;
  RETURN_WORD.lastIndex = cursor.startIndex;
  for (let m = RETURN_WORD.exec(text); m && m.index < end; m = RETURN_WORD.exec(text)) {
    let depth = 0;
    let found = false;
    while (cursor.gotoFirstChildForIndex(m.index) !== null) {
      depth++;
      const type = typeAt(cursor);
      if (type === 'return_statement') {
        found = cursor.startIndex === m.index && namedChildCountAt(cursor) > 0;
        break;
      }
      if (!STATEMENT_CONTAINERS.has(type)) break;
    }
    for (; depth > 0; depth--) cursor.gotoParent();
    if (found) return true;
  }
  return false;
}

/** lastCodeRow() of the node under the cursor. */
function lastCodeRowAt(cursor: TreeCursor): number {
  if (!cursor.gotoLastChild()) return cursor.endPosition.row;
  for (;;) {
    const type = typeAt(cursor);
    // Comments and a dangling backslash continuation are not code (CPython's end_lineno agrees).
    if (type !== 'comment' && type !== 'line_continuation') {
      // A node without children ends where its last code ends, so containers simply recurse.
      const row = STATEMENT_CONTAINERS.has(type) || type === 'function_definition' || type === 'class_definition' || type === 'decorated_definition' ? lastCodeRowAt(cursor) : cursor.endPosition.row;
      cursor.gotoParent();
      return row;
    }
    if (!cursor.gotoPreviousSibling()) {
      cursor.gotoParent();
      return cursor.endPosition.row;
    }
  }
}

function normalizeSignature(raw: string): string {
  let sig = raw.replace(/\s*#[^\n]*$/gm, '').trim();
  if (sig.endsWith(':')) sig = sig.slice(0, -1);
  return sig.replace(/\s*\n\s*/g, ' ').replace(/\(\s+/g, '(').replace(/,\s*\)/g, ')').trim();
}

/**
 * One TreeCursor walk over the module's statements. Node objects of the tree-sitter binding are
 * costly (each is marshalled from native code and registered with a finalizer), so everything is
 * read from the cursor and sliced from the source; a function's node is only made when asked for.
 */
export function extractFunctions(path: string, tree: Tree, text: string, lines = splitLines(text)): ExtractedFunction[] {
  const out: ExtractedFunction[] = [];
  const cursor = tree.walk();

  const functionAt = (classChain: string[], classBases: string[], decoratedStartRow: number | null, decorators: string[]) => {
    const defStart = cursor.startIndex;
    const defEnd = cursor.endIndex;
    const startLine = (decoratedStartRow ?? cursor.startPosition.row) + 1;
    const descendantIndex = cursor.currentDescendantIndex;
    const endLine = lastCodeRowAt(cursor) + 1;
    const source = lines.slice(startLine - 1, endLine).join('\n');
    let name: string | null = null;
    let params: string[] | null = null;
    let bodyStart = -1;
    let summary: { docstring: string | null; trivial: boolean } = { docstring: null, trivial: true };
    let returns = false;
    let async = false;
    if (cursor.gotoFirstChild()) {
      async = typeAt(cursor) === 'async';
      do {
        const field = fieldAt(cursor);
        if (field === 'name' && name === null) name = cursorText(cursor, text);
        else if (field === 'parameters' && params === null) params = parameterNamesAt(cursor, text);
        else if (field === 'body' && bodyStart < 0) {
          bodyStart = cursor.startIndex;
          summary = bodySummary(cursor, text);
          returns = source.includes('return') && returnsIn(cursor, text);
        }
      } while (cursor.gotoNextSibling());
      cursor.gotoParent();
    }
    let node: SyntaxNode | null = null;
    out.push({
      path,
      qualname: [...classChain, name ?? ''].join('.'),
      name: name ?? '',
      kind: classChain.length ? 'method' : 'function',
      startLine,
      endLine,
      signature: normalizeSignature(text.slice(defStart, bodyStart >= 0 ? bodyStart : defEnd)),
      docstring: summary.docstring,
      decorators,
      returns,
      source,
      isAsync: async,
      params: params ?? [],
      classChain,
      classBases,
      trivialBody: summary.trivial,
      get node(): SyntaxNode {
        if (!node) {
          const c = tree.walk();
          c.gotoDescendant(descendantIndex);
          node = c.currentNode;
        }
        return node;
      },
    });
  };

  // The name and base classes come before the body in the grammar, so one pass over the children suffices.
  const classAt = (classChain: string[]) => {
    let name: string | null = null;
    let bases: string[] | null = null;
    let visited = false;
    if (!cursor.gotoFirstChild()) return;
    do {
      const field = fieldAt(cursor);
      if (field === 'name' && name === null) name = cursorText(cursor, text);
      else if (field === 'superclasses' && bases === null) {
        bases = [];
        if (gotoFirstNamedChild(cursor)) {
          do {
            const t = typeAt(cursor);
            if (t !== 'keyword_argument' && t !== 'comment') bases.push(cursorText(cursor, text));
          } while (gotoNextNamedSibling(cursor));
          cursor.gotoParent();
        }
      } else if (field === 'body' && !visited) {
        visited = true;
        visit([...classChain, name ?? ''], bases ?? []);
      }
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
  };

  /** The definitions of the container under the cursor, looking into compound statements (definitionsIn). */
  const visit = (classChain: string[], classBases: string[]): void => {
    let type = firstNamed(cursor);
    if (type === null) return;
    do {
      if (type === 'function_definition') functionAt(classChain, classBases, null, []);
      else if (type === 'class_definition') classAt(classChain);
      else if (type === 'decorated_definition') {
        // Decorators precede the definition, so they are all known when it is reached.
        const startRow = cursor.startPosition.row;
        const decorators: string[] = [];
        let seenDefinition = false;
        if (cursor.gotoFirstChild()) {
          do {
            if (namedTypeAt(cursor) === 'decorator') decorators.push(cursorText(cursor, text).replace(/^@\s*/, '').trim());
            else if (!seenDefinition && fieldAt(cursor) === 'definition') {
              seenDefinition = true;
              const defType = typeAt(cursor);
              if (defType === 'function_definition') functionAt(classChain, classBases, startRow, decorators);
              else if (defType === 'class_definition') classAt(classChain);
            }
          } while (cursor.gotoNextSibling());
          cursor.gotoParent();
        }
      } else if (STATEMENT_CONTAINERS.has(type)) visit(classChain, classBases);
    } while ((type = nextNamed(cursor)) !== null);
    cursor.gotoParent();
  };

  visit([], []);
  return out;
}
