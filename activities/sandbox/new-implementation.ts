/**
 * RepoST's ground-truth harness: the original function is copied into the evaluation script
 * under the name `<name>_new_implementation`, which the script's tests compare with the original.
 * A top-level function is inserted before the test function / test class / `__main__` block;
 * a method (`Class.method`) is appended to the end of its class body, re-indented.
 *
 * A whole class (a class environment) is copied as `<Class>_new_implementation`, a top-level
 * class inserted where a top-level function would be, its own references to its name renamed with
 * it (`super(Class, self)`, `Class(...)` in a method, `isinstance(x, Class)`), so the copy stands on
 * its own as the original does in its module.
 *
 * The method copy's annotations are postponed (stored as strings, as `from __future__ import
 * annotations` would): while a class body runs its own name is not bound yet, so a copy
 * annotated `-> Angle` inside `class Angle` would fail at class creation, which the original,
 * defined elsewhere, did not.
 */
import { createPythonParser, type PythonParser, type SyntaxNode, type Tree } from '../python-parser';

type Node = SyntaxNode;

let parser: PythonParser | null = null;
export function parse(text: string): Tree {
  parser ??= createPythonParser();
  return parser.parse(text, undefined, { bufferSize: Math.max(64 * 1024, text.length * 2 + 1024) });
}

export const NEW_IMPLEMENTATION_SUFFIX = '_new_implementation';

/** `foo` -> `foo_new_implementation`; `Class.method` -> `Class.method_new_implementation`. */
export function newImplementationName(functionName: string): string {
  return functionName + NEW_IMPLEMENTATION_SUFFIX;
}

export function functionNode(node: Node): Node | null {
  if (node.type === 'function_definition') return node;
  if (node.type === 'decorated_definition') {
    const def = node.childForFieldName('definition');
    return def && def.type === 'function_definition' ? def : null;
  }
  return null;
}

/** Removes the first line's indentation from every line (as far as each line has it). */
export function dedentLike(source: string): string {
  const lines = source.replace(/^\s*\n/, '').split('\n');
  const indent = /^[ \t]*/.exec(lines[0] ?? '')![0];
  if (!indent) return lines.join('\n');
  return lines.map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.replace(/^[ \t]+/, ''))).join('\n');
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

function applyEdits(text: string, edits: Edit[]): string {
  for (const e of [...edits].sort((a, b) => b.start - a.start)) text = text.slice(0, e.start) + e.text + text.slice(e.end);
  return text;
}

function pythonStringLiteral(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, ' ');
  if (!flat.includes("'")) return `'${flat.replace(/\\/g, '\\\\')}'`;
  return `"${flat.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The function source renamed, and for methods with annotations turned into strings. */
export function renamedCopy(originalFunctionSource: string, methodName: string, postponeAnnotations: boolean): string {
  const source = dedentLike(originalFunctionSource);
  const tree = parse(source);
  const top = tree.rootNode.namedChildren.map(functionNode).find((n): n is Node => n !== null);
  if (!top) throw new Error('the original function source defines no function');
  const name = top.childForFieldName('name')!;
  if (name.text !== methodName) {
    throw new Error(`the original function is named ${name.text}, expected ${methodName}`);
  }
  const edits: Edit[] = [{ start: name.startIndex, end: name.endIndex, text: methodName + NEW_IMPLEMENTATION_SUFFIX }];
  if (postponeAnnotations) edits.push(...annotationEdits(top));
  return applyEdits(source, edits).replace(/\s+$/, '');
}

/** A function's annotations as strings (`from __future__ import annotations` would store them so). */
function annotationEdits(fn: Node): Edit[] {
  const params = fn.childForFieldName('parameters');
  const annotations = [
    ...(params ? params.namedChildren.map((p) => p.childForFieldName('type')) : []),
    fn.childForFieldName('return_type'),
  ].filter((n): n is Node => n !== null && n.type !== 'string' && !(n.namedChildCount === 1 && n.firstNamedChild!.type === 'string'));
  return annotations.map((a) => ({ start: a.startIndex, end: a.endIndex, text: pythonStringLiteral(a.text) }));
}

/** A method's source with its annotations postponed: inside its class body the class's own name is not bound yet. */
function postponedMethod(source: string): string {
  const tree = parse(source);
  const fn = tree.rootNode.namedChildren.map(functionNode).find((n): n is Node => n !== null);
  return fn ? applyEdits(source, annotationEdits(fn)) : source;
}

/** Rows (0-based) that begin inside a multi-line string: indenting them would change the string. */
function rowsInsideStrings(tree: Tree): Set<number> {
  const rows = new Set<number>();
  const walk = (n: Node) => {
    if (n.type === 'string' || n.type === 'concatenated_string') {
      for (let r = n.startPosition.row + 1; r <= n.endPosition.row; r++) rows.add(r);
      return;
    }
    for (const c of n.children) walk(c);
  };
  walk(tree.rootNode);
  return rows;
}

function indent(source: string, prefix: string): string {
  const keep = rowsInsideStrings(parse(source));
  return source
    .split('\n')
    .map((line, row) => (line.trim() === '' || keep.has(row) ? line : prefix + line))
    .join('\n');
}

/** Statements that may hold more statements of the same scope (not a new one, as a def or class does). */
const SCOPE_BLOCKS = new Set(['if_statement', 'with_statement', 'try_statement', 'for_statement', 'while_statement']);
const SCOPE_CLAUSES = new Set(['elif_clause', 'else_clause', 'except_clause', 'except_group_clause', 'finally_clause']);

/**
 * The statements of one scope, including those nested in its `if`, `with`, `try`, `for` and
 * `while` blocks (a class defined under `with patch(...):` at module level is still a module-level
 * class), but not those of the functions and classes it defines.
 */
export function scopeStatements(statements: Node[]): Node[] {
  const out: Node[] = [];
  const blocksOf = (n: Node) => {
    for (const c of n.namedChildren) {
      if (c.type === 'block') visit(c.namedChildren);
      else if (SCOPE_CLAUSES.has(c.type)) blocksOf(c);
    }
  };
  const visit = (nodes: Node[]) => {
    for (const n of nodes) {
      out.push(n);
      if (SCOPE_BLOCKS.has(n.type)) blocksOf(n);
    }
  };
  visit(statements);
  return out;
}

export function findClass(root: Node, path: string[]): Node | null {
  let scope: Node[] = scopeStatements(root.namedChildren);
  let found: Node | null = null;
  for (const part of path) {
    found = null;
    for (const child of scope) {
      const cls = child.type === 'decorated_definition' ? child.childForFieldName('definition') : child;
      if (cls?.type === 'class_definition' && cls.childForFieldName('name')?.text === part) {
        found = cls;
        break;
      }
    }
    if (!found) return null;
    scope = scopeStatements(found.childForFieldName('body')?.namedChildren ?? []);
  }
  return found;
}

/** Is this top-level statement where the tests start (test function, test class, main block)? */
function startsTests(node: Node): boolean {
  const def = node.type === 'decorated_definition' ? node.childForFieldName('definition') : node;
  if (def?.type === 'function_definition') return /^test/i.test(def.childForFieldName('name')?.text ?? '');
  if (def?.type === 'class_definition') {
    const name = def.childForFieldName('name')?.text ?? '';
    const bases = def.childForFieldName('superclasses')?.text ?? '';
    return /^Test/.test(name) || /TestCase/.test(bases);
  }
  if (node.type === 'if_statement') {
    return /__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__/.test(node.childForFieldName('condition')?.text ?? '');
  }
  return false;
}

function lineStartOffsets(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return starts;
}

export function withNewImplementation(script: string, originalFunctionSource: string, functionName: string): string {
  const parts = functionName.split('.');
  const methodName = parts[parts.length - 1]!;
  const classPath = parts.slice(0, -1);
  const tree = parse(script);
  const lineStarts = lineStartOffsets(script);
  const insertAtRow = (row: number, block: string) => {
    const at = row < lineStarts.length ? lineStarts[row]! : script.length;
    const before = script.slice(0, at);
    const sep = before === '' || before.endsWith('\n') ? '' : '\n';
    return `${before}${sep}${block}${script.slice(at)}`;
  };

  if (classPath.length > 0) {
    const cls = findClass(tree.rootNode, classPath);
    const body = cls?.childForFieldName('body');
    if (cls && body && body.namedChildCount > 0) {
      const bodyIndent = ' '.repeat(body.namedChildren[0]!.startPosition.column);
      const copy = indent(renamedCopy(originalFunctionSource, methodName, true), bodyIndent);
      return insertAtRow(body.endPosition.row + 1, `\n${copy}\n\n`);
    }
  }

  return insertBeforeTests(script, tree, renamedCopy(originalFunctionSource, methodName, false));
}

/**
 * A top-level definition put before where the tests start (test function, test class, `__main__`
 * block), or at the end of a script without tests.
 */
export function insertBeforeTests(script: string, tree: Tree, copy: string): string {
  const lineStarts = lineStartOffsets(script);
  const statements = tree.rootNode.namedChildren;
  const firstTest = statements.findIndex(startsTests);
  if (firstTest < 0) return `${script.replace(/\s*$/, '')}\n\n\n${copy}\n`;
  // Keep comments that introduce the test block attached to it.
  let row = statements[firstTest]!.startPosition.row;
  for (let i = firstTest - 1; i >= 0 && statements[i]!.type === 'comment' && statements[i]!.endPosition.row === row - 1; i--) {
    row = statements[i]!.startPosition.row;
  }
  const at = row < lineStarts.length ? lineStarts[row]! : script.length;
  const before = script.slice(0, at);
  const sep = before === '' || before.endsWith('\n') ? '' : '\n';
  return `${before}${sep}${copy}\n\n\n${script.slice(at)}`;
}

/** The top-level class in `source` (its last definition of that name), or null. */
function topLevelClass(root: Node, className: string): Node | null {
  const classes = root.namedChildren
    .map((n) => (n.type === 'decorated_definition' ? n.childForFieldName('definition') : n))
    .filter((n): n is Node => n?.type === 'class_definition' && n.childForFieldName('name')?.text === className);
  return classes[classes.length - 1] ?? null;
}

/**
 * The class's source as `<Class>_new_implementation`: its name, and every use of the name inside
 * it as a variable (not an attribute `x.Class`, not a keyword argument `Class=`), renamed.
 */
export function renamedClassCopy(classSource: string, className: string): string {
  const source = dedentLike(classSource);
  const tree = parse(source);
  const cls = topLevelClass(tree.rootNode, className);
  if (!cls) throw new Error(`the source defines no top-level class ${className}`);
  const edits: Edit[] = [];
  const renamed = className + NEW_IMPLEMENTATION_SUFFIX;
  const walk = (n: Node) => {
    if (n.type === 'identifier' && n.text === className) {
      const parent = n.parent;
      const isAttribute = parent?.type === 'attribute' && parent.childForFieldName('attribute')?.id === n.id;
      const isKeyword = parent?.type === 'keyword_argument' && parent.childForFieldName('name')?.id === n.id;
      if (!isAttribute && !isKeyword) edits.push({ start: n.startIndex, end: n.endIndex, text: renamed });
      return;
    }
    for (const c of n.children) walk(c);
  };
  walk(cls.parent?.type === 'decorated_definition' ? cls.parent : cls);
  const outer = cls.parent?.type === 'decorated_definition' ? cls.parent : cls;
  return applyEdits(source.slice(0, outer.endIndex), edits).slice(outer.startIndex).replace(/\s+$/, '');
}

/** The script with the original class copied in as `<Class>_new_implementation` (a class environment's ground truth). */
export function withNewClassImplementation(script: string, classSource: string, className: string): string {
  return insertBeforeTests(script, parse(script), renamedClassCopy(classSource, className));
}

/**
 * An isolated run's two halves (see sandbox-image/harness/repost_isolated.py): the script the
 * trusted process runs, with a stub as `<name>_new_implementation` that calls the candidate's
 * process, and the module the candidate's process loads: the script's definitions with the
 * target's definition replaced by the candidate's, no test, no main block, no copy of the
 * original (docs/architecture.md, invariant 14). Throws when the target cannot be found or the
 * candidate defines no such function.
 */
export interface IsolatedPlacement {
  /** The evaluation script as the trusted process runs it. */
  script: string;
  /** The candidate's module (the caller adds the candidate's preamble). */
  module: string;
  target: string;
  kind: Placement;
}

const HOST = '__repost_candidate__';

function definitionName(node: Node): string | null {
  const def = node.type === 'decorated_definition' ? node.childForFieldName('definition') : node;
  if (def?.type !== 'function_definition' && def?.type !== 'class_definition') return null;
  return def.childForFieldName('name')?.text ?? null;
}

/** The last definition of `name` among a scope's statements (the one Python keeps). */
function lastDefinition(statements: Node[], name: string): Node | null {
  let found: Node | null = null;
  for (const n of scopeStatements(statements)) if (definitionName(n) === name) found = n;
  return found;
}

/** The candidate's function (or class) named `name`, dedented, with its decorators. */
function candidateDefinition(candidateCode: string, name: string): string {
  const source = dedentLike(candidateCode);
  const root = parse(source).rootNode;
  const def = lastDefinition(root.namedChildren, name);
  if (!def) throw new Error(`the candidate defines no ${name}`);
  return source.slice(def.startIndex, def.endIndex).replace(/\s+$/, '');
}

/** The script's statements a candidate's module keeps: everything but tests, test classes, the main block and the statements run after the tests start. */
function definitionsOnly(script: string, replace: { start: number; end: number; text: string } | null, target: string): string {
  const tree = parse(script);
  const statements = tree.rootNode.namedChildren;
  // The target's own definition stays even when it looks like a test (a TestCase's method).
  const isTestStart = (n: Node) => startsTests(n) && definitionName(n) !== target;
  const firstTest = statements.findIndex(isTestStart);
  const cut: Edit[] = replace ? [replace] : [];
  if (firstTest >= 0) {
    for (const n of statements.slice(firstTest)) {
      const keep = !isTestStart(n) && (n.type === 'import_statement' || n.type === 'import_from_statement' || n.type === 'function_definition' || n.type === 'class_definition' || n.type === 'decorated_definition' || n.type === 'comment');
      if (!keep) cut.push({ start: n.startIndex, end: n.endIndex, text: '' });
    }
  }
  return applyEdits(script, cut).replace(/\n{4,}/g, '\n\n\n').replace(/\s*$/, '\n');
}

/** A whole class placed for an isolated run: the stub class calls the candidate's class in its own process. */
function isolatedClassPlacement(script: string, candidateCode: string, qualname: string): IsolatedPlacement {
  const tree = parse(script);
  const ready = `${HOST}.ready(globals())`;
  const cls = lastDefinition(tree.rootNode.namedChildren, qualname);
  if (!cls) throw new Error(`the script defines no class ${qualname}`);
  const stub = `class ${qualname}${NEW_IMPLEMENTATION_SUFFIX}(${HOST}.stub_base()):\n    __repost_target__ = ${JSON.stringify(qualname)}\n\n\n${ready}`;
  const module = definitionsOnly(script, { start: cls.startIndex, end: cls.endIndex, text: candidateDefinition(candidateCode, qualname) }, qualname);
  return { script: insertBeforeTests(script, tree, stub), module, target: qualname, kind: 'class' };
}

/** A function or method placed for an isolated run: a stub of the same shape calls the candidate's in its own process. */
function isolatedFunctionPlacement(script: string, candidateCode: string, qualname: string): IsolatedPlacement {
  const kind = 'function';
  const parts = qualname.split('.');
  const name = parts[parts.length - 1]!;
  const classPath = parts.slice(0, -1);
  const tree = parse(script);
  const ready = `${HOST}.ready(globals())`;
  if (classPath.length === 0) {
    const def = lastDefinition(tree.rootNode.namedChildren, name);
    const stub = `def ${name}${NEW_IMPLEMENTATION_SUFFIX}(*args, **kwargs):\n    return ${HOST}.call(${JSON.stringify(name)}, args, kwargs)\n\n\n${ready}`;
    candidateDefinition(candidateCode, name);
    // The whole answer: helpers it defines beside the function go with it.
    const candidate = dedentLike(candidateCode).replace(/\s+$/, '');
    const module = def
      ? definitionsOnly(script, { start: def.startIndex, end: def.endIndex, text: candidate }, name)
      : `${definitionsOnly(script, null, name)}\n\n${candidate}\n`;
    return { script: insertBeforeTests(script, tree, stub), module, target: qualname, kind };
  }
  const cls = findClass(tree.rootNode, classPath);
  const body = cls?.childForFieldName('body');
  if (!cls || !body || body.namedChildCount === 0) throw new Error(`the script defines no class ${classPath.join('.')}`);
  const bodyIndent = ' '.repeat(body.namedChildren[0]!.startPosition.column);
  const method = lastDefinition(body.namedChildren, name);
  const decorators = method?.type === 'decorated_definition' ? method.namedChildren.filter((c) => c.type === 'decorator').map((d) => d.text.replace(/^@\s*/, '').trim()) : [];
  const q = JSON.stringify(qualname);
  // The stub takes the method's kind from the script's own definition: static, class, property or plain.
  const stubMethod = decorators.includes('staticmethod')
    ? `@staticmethod\ndef ${name}(*args, **kwargs):\n    return ${HOST}.call_method(${q}, None, args, kwargs)`
    : decorators.includes('classmethod')
      ? `@classmethod\ndef ${name}(cls, *args, **kwargs):\n    return ${HOST}.call_method(${q}, cls, args, kwargs)`
      : decorators.includes('property')
        ? `@property\ndef ${name}(self):\n    return ${HOST}.get_property(${q}, self)`
        : `def ${name}(self, *args, **kwargs):\n    return ${HOST}.call_method(${q}, self, args, kwargs)`;
  const withStub = withNewImplementation(script, stubMethod, qualname);
  const placed = insertBeforeTests(withStub, parse(withStub), ready);
  const candidate = indent(postponedMethod(candidateDefinition(candidateCode, name)), bodyIndent).replace(/^\s+/, '');
  const module = method
    ? definitionsOnly(script, { start: method.startIndex, end: method.endIndex, text: candidate }, classPath[0]!)
    : definitionsOnly(script, { start: body.endIndex, end: body.endIndex, text: `\n\n${bodyIndent}${candidate}` }, classPath[0]!);
  return { script: placed, module, target: qualname, kind };
}

/**
 * How a target is placed as `<name>_new_implementation`: a function (or a method, in its class)
 * or a whole class. The target's kind names its placement (`activities/targets/`); the sandbox
 * only looks it up here.
 */
export type Placement = 'function' | 'class';

/** The script with the ground truth copied in, by placement. */
export const GROUND_TRUTH_PLACEMENT: Readonly<Record<Placement, (script: string, original: string, name: string) => string>> = {
  function: withNewImplementation,
  class: withNewClassImplementation,
};

const ISOLATED_PLACEMENT: Readonly<Record<Placement, (script: string, candidateCode: string, qualname: string) => IsolatedPlacement>> = {
  function: isolatedFunctionPlacement,
  class: isolatedClassPlacement,
};

/** An isolated run's two halves for a candidate answer, by placement (see IsolatedPlacement). */
export function isolatedPlacement(script: string, candidateCode: string, qualname: string, placement: Placement = 'function'): IsolatedPlacement {
  return ISOLATED_PLACEMENT[placement](script, candidateCode, qualname);
}
