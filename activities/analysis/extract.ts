/**
 * Function and method extraction from one parsed module: module-level functions and the methods
 * of classes at any nesting depth; functions nested in functions are not candidates (they are
 * not reachable by a qualified name).
 */
import type { SyntaxNode, Tree } from './parser';
import { STATEMENT_CONTAINERS, decoratorsOf, definitionsIn, docstringOf, isAsync, lastCodeRow, outerNode } from './syntax';
import type { FunctionKind } from './types';

/** A function as found in the tree, before filtering and id assignment. */
export interface ExtractedFunction {
  path: string;
  qualname: string;
  name: string;
  kind: FunctionKind;
  startLine: number;
  endLine: number;
  signature: string;
  docstring: string | null;
  decorators: string[];
  returns: boolean;
  source: string;
  isAsync: boolean;
  /** Parameter names in order (self/cls included). */
  params: string[];
  /** Names of the enclosing classes, outermost first. */
  classChain: string[];
  /** Base-class expressions of the innermost enclosing class. */
  classBases: string[];
  node: SyntaxNode;
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

/** Whether a body returns a value, not counting nested functions, lambdas or classes. */
export function returnsValue(def: SyntaxNode, source?: string): boolean {
  if (source !== undefined && !source.includes('return')) return false;
  const body = def.childForFieldName('body');
  if (!body) return false;
  // A cursor walk over statements only: expressions cannot contain a return statement, and
  // nested scopes do not count. Much cheaper than materialising every descendant node.
  const cursor = body.walk();
  let depth = 0;
  for (;;) {
    const type = cursor.nodeType;
    if (type === 'return_statement' && cursor.currentNode.namedChildCount > 0) return true;
    if ((depth === 0 || STATEMENT_CONTAINERS.has(type)) && cursor.gotoFirstChild()) {
      depth++;
      continue;
    }
    while (!cursor.gotoNextSibling()) {
      if (depth === 0 || !cursor.gotoParent()) return false;
      depth--;
      if (depth === 0) return false;
    }
  }
}

export function signatureOf(def: SyntaxNode, text: string): string {
  const body = def.childForFieldName('body');
  const end = body ? body.startIndex : def.endIndex;
  let sig = text.slice(def.startIndex, end).replace(/\s*#[^\n]*$/gm, '').trim();
  if (sig.endsWith(':')) sig = sig.slice(0, -1);
  return sig.replace(/\s*\n\s*/g, ' ').replace(/\(\s+/g, '(').replace(/,\s*\)/g, ')').trim();
}

export function extractFunctions(path: string, tree: Tree, text: string, lines = splitLines(text)): ExtractedFunction[] {
  const out: ExtractedFunction[] = [];
  const visit = (container: SyntaxNode, classChain: string[], classBases: string[]) => {
    for (const def of definitionsIn(container)) {
      const name = def.childForFieldName('name')?.text ?? '';
      const body = def.childForFieldName('body');
      if (def.type === 'class_definition') {
        const bases = def.childForFieldName('superclasses');
        const baseTexts = bases ? bases.namedChildren.filter((c) => c.type !== 'keyword_argument' && c.type !== 'comment').map((c) => c.text) : [];
        if (body) visit(body, [...classChain, name], baseTexts);
        continue;
      }
      const outer = outerNode(def);
      const startLine = outer.startPosition.row + 1;
      const endLine = lastCodeRow(def) + 1;
      const source = lines.slice(startLine - 1, endLine).join('\n');
      out.push({
        path,
        qualname: [...classChain, name].join('.'),
        name,
        kind: classChain.length ? 'method' : 'function',
        startLine,
        endLine,
        signature: signatureOf(def, text),
        docstring: docstringOf(body),
        decorators: decoratorsOf(def).map((d) => d.text.replace(/^@\s*/, '').trim()),
        returns: returnsValue(def, source),
        source,
        isAsync: isAsync(def),
        params: parameterNames(def.childForFieldName('parameters')),
        classChain,
        classBases,
        node: def,
      });
    }
  };
  visit(tree.rootNode, [], []);
  return out;
}
