/**
 * Classes as OpenClassGen describes them: a skeleton (class and method signatures with their
 * docstrings, bodies replaced by `pass`) and static metrics (size, complexity, coupling,
 * inheritance, documentation). Test classes are excluded by the paper's rule: a name starting or
 * ending with "Test" or "Case", or a path with a "test"/"tests"/"unit" component.
 */
import { scopeOf } from './bindings';
import { signatureOf } from './extract';
import type { SyntaxNode } from './parser';
import { scopeLocals } from './references';
import type { Repository, ModuleInfo } from './repository';
import type { Definition, Resolver } from './resolver';
import { decoratorsOf, definitionsIn, docstringOf, lastCodeRow, outerNode } from './syntax';

export interface ClassMetrics {
  /** Lines of the class span (decorators included). */
  totalLines: number;
  /** Lines with code on them. */
  codeLines: number;
  /** Lines with a comment or part of a docstring. */
  commentLines: number;
  blankLines: number;
  commentToCodeRatio: number;
  /** Methods defined directly in the class body. */
  methods: number;
  cyclomatic: { total: number; max: number; perMethod: Record<string, number> };
  /** Deepest nesting of control statements inside a method (0: straight-line code). */
  maxNesting: number;
  /** Distinct names the class uses that it does not define: local (elsewhere in the repository) and external. */
  fanOut: { local: number; external: number; total: number };
  /** Longest chain of in-repository base classes above the class. */
  inheritanceDepth: number;
  /** Classes in the repository that name it as a direct base. */
  children: number;
  /** Classes (this and nested) plus their methods. */
  programUnits: number;
  documentedUnits: number;
  docstringCoverage: number;
}

export interface ClassInfo {
  path: string;
  qualname: string;
  name: string;
  startLine: number;
  endLine: number;
  bases: string[];
  decorators: string[];
  docstring: string | null;
  skeleton: string;
  metrics: ClassMetrics;
  /** 'full' | 'partial' | 'none': OpenClassGen's documentation levels. */
  documentation: 'full' | 'partial' | 'none';
}

export function isOpenClassGenTestClass(path: string, name: string): boolean {
  if (/^(Test|Case)|(Test|Case)$/.test(name)) return true;
  return path.split('/').some((seg) => /tests?|unit/i.test(seg));
}

const DECISIONS = new Set([
  'if_statement',
  'elif_clause',
  'for_statement',
  'while_statement',
  'except_clause',
  'except_group_clause',
  'conditional_expression',
  'for_in_clause',
  'if_clause',
  'case_clause',
]);

const NESTING = new Set(['if_statement', 'for_statement', 'while_statement', 'try_statement', 'with_statement', 'match_statement']);

/** McCabe: one plus the decision points (each `and`/`or` counts as one). */
export function cyclomaticComplexity(fn: SyntaxNode): number {
  // Nested functions and lambdas count toward the function that contains them.
  return 1 + fn.descendantsOfType([...DECISIONS, 'boolean_operator']).length;
}

/** Deepest nesting of control statements under `node` (no recursion: safe on any tree depth). */
export function maxNestingDepth(node: SyntaxNode): number {
  let best = 0;
  for (const n of node.descendantsOfType([...NESTING])) {
    let depth = 1;
    for (let p = n.parent; p && p.id !== node.id; p = p.parent) if (NESTING.has(p.type)) depth++;
    best = Math.max(best, depth);
  }
  return best;
}

function docstringNode(body: SyntaxNode | null): SyntaxNode | null {
  let first = body?.firstNamedChild ?? null;
  while (first && first.type === 'comment') first = first.nextNamedSibling;
  if (first && first.type === 'expression_statement' && first.namedChildCount === 1 && ['string', 'concatenated_string'].includes(first.namedChild(0)!.type)) return first;
  return null;
}

/** Skeleton lines of a class at `indent` (nested classes recurse). */
function skeletonLines(module: ModuleInfo, cls: SyntaxNode, indent: string, units: { total: number; documented: number }): string[] {
  const out: string[] = [];
  for (const d of decoratorsOf(cls)) out.push(`${indent}${d.text}`);
  const body = cls.childForFieldName('body');
  const header = module.text.slice(cls.startIndex, body ? body.startIndex : cls.endIndex).replace(/\s*#[^\n]*$/gm, '').trim();
  out.push(`${indent}${header.replace(/\s*\n\s*/g, ' ')}`);
  const inner = `${indent}    `;
  units.total++;
  const headerLines = out.length;
  const doc = docstringNode(body);
  if (doc) {
    units.documented++;
    out.push(...reindent(doc.text, inner));
  }
  let members = 0;
  for (const def of body ? definitionsIn(body) : []) {
    members++;
    // Members are separated by a blank line, but none directly under the class line.
    if (out.length > headerLines) out.push('');
    if (def.type === 'class_definition') {
      out.push(...skeletonLines(module, def, inner, units));
      continue;
    }
    units.total++;
    for (const d of decoratorsOf(def)) out.push(`${inner}${d.text}`);
    out.push(`${inner}${signatureOf(def, module.text)}:`);
    const fdoc = docstringNode(def.childForFieldName('body'));
    if (fdoc) {
      units.documented++;
      out.push(...reindent(fdoc.text, `${inner}    `));
    }
    out.push(`${inner}    pass`);
  }
  if (!doc && members === 0) out.push(`${inner}pass`);
  return out;
}

/** A docstring literal moved to a new indentation: continuation lines keep their relative indent. */
function reindent(literal: string, indent: string): string[] {
  const lines = literal.split('\n').map((l) => l.replace(/\r$/, ''));
  let margin = Infinity;
  for (const l of lines.slice(1)) if (l.trim()) margin = Math.min(margin, l.length - l.trimStart().length);
  if (margin === Infinity) margin = 0;
  return lines.map((l, i) => (i === 0 ? `${indent}${l}` : l.trim() ? `${indent}${l.slice(margin)}` : ''));
}

function lineCounts(module: ModuleInfo, cls: SyntaxNode) {
  const outer = outerNode(cls);
  const first = outer.startPosition.row;
  const last = lastCodeRow(cls);
  const commentRows = new Set<number>();
  for (const c of cls.descendantsOfType('comment')) commentRows.add(c.startPosition.row);
  for (const body of [cls.childForFieldName('body'), ...cls.descendantsOfType('function_definition').map((f) => f.childForFieldName('body'))]) {
    const doc = docstringNode(body ?? null);
    if (doc) for (let r = doc.startPosition.row; r <= doc.endPosition.row; r++) commentRows.add(r);
  }
  let code = 0;
  let comment = 0;
  let blank = 0;
  for (let r = first; r <= last; r++) {
    const line = module.lines[r] ?? '';
    const t = line.trim();
    if (!t) {
      blank++;
      continue;
    }
    const isComment = commentRows.has(r);
    if (isComment) comment++;
    // A row is code unless it is only a comment or only docstring text.
    if (!isComment || !(t.startsWith('#') || /^("""|'''|[rRuUbB]?["'])/.test(t) || !/[=()]/.test(t))) code++;
  }
  return { total: last - first + 1, code, comment, blank };
}

export function classesOf(repo: Repository, resolver: Resolver): ClassInfo[] {
  const all: { module: ModuleInfo; node: SyntaxNode; qualname: string; def: Definition }[] = [];
  for (const module of repo.modules.values()) {
    const visit = (container: SyntaxNode, prefix: string[], owner: Definition | null) => {
      for (const def of definitionsIn(container)) {
        if (def.type !== 'class_definition') continue;
        const name = def.childForFieldName('name')!.text;
        const qualname = [...prefix, name].join('.');
        const d = resolver.definition(module, qualname, 'class', def, owner);
        all.push({ module, node: def, qualname, def: d });
        const body = def.childForFieldName('body');
        if (body) visit(body, [...prefix, name], d);
      }
    };
    visit(module.tree.rootNode, [], null);
  }
  const childCount = new Map<Definition, number>();
  for (const c of all) for (const b of resolver.baseClasses(c.def)) childCount.set(b, (childCount.get(b) ?? 0) + 1);
  const depthCache = new Map<Definition, number>();
  const depthOf = (d: Definition, seen: Set<Definition>): number => {
    if (depthCache.has(d)) return depthCache.get(d)!;
    if (seen.has(d)) return 0;
    seen.add(d);
    const bases = resolver.baseClasses(d);
    const depth = bases.length ? 1 + Math.max(...bases.map((b) => depthOf(b, seen))) : 0;
    depthCache.set(d, depth);
    return depth;
  };

  const out: ClassInfo[] = [];
  for (const { module, node, qualname, def } of all) {
    const name = node.childForFieldName('name')!.text;
    if (isOpenClassGenTestClass(module.path, name)) continue;
    const body = node.childForFieldName('body');
    const units = { total: 0, documented: 0 };
    const skeleton = skeletonLines(module, node, '', units).join('\n');
    const methods = body ? definitionsIn(body).filter((d) => d.type === 'function_definition') : [];
    const perMethod: Record<string, number> = {};
    let maxNesting = 0;
    for (const m of methods) {
      perMethod[m.childForFieldName('name')!.text] = cyclomaticComplexity(m);
      maxNesting = Math.max(maxNesting, maxNestingDepth(m.childForFieldName('body')!));
    }
    const cc = Object.values(perMethod);
    // Fan-out: free names of the class (not bound inside it), resolved at module level.
    const bound = scopeLocals(node).locals;
    const classNames = new Set(scopeOf(body ?? node).bindings.keys());
    const local = new Set<string>();
    const external = new Set<string>();
    for (const id of node.descendantsOfType('identifier')) {
      const p = id.parent;
      if (!p) continue;
      if (p.type === 'attribute' && p.childForFieldName('attribute')?.id === id.id) continue;
      if (p.type === 'keyword_argument' && p.childForFieldName('name')?.id === id.id) continue;
      if ((p.type === 'function_definition' || p.type === 'class_definition') && p.childForFieldName('name')?.id === id.id) continue;
      const n = id.text;
      if (bound.has(n) || classNames.has(n)) continue;
      const t = resolver.resolveName(module, n, new Set());
      if (t.t === 'def') {
        if (t.def !== def) local.add(n);
      } else if (t.t === 'module' || t.t === 'namespace') local.add(n);
      else if (t.t === 'external' || t.t === 'unresolved') external.add(n);
    }
    const lines = lineCounts(module, node);
    const docstring = docstringOf(body);
    out.push({
      path: module.path,
      qualname,
      name,
      startLine: outerNode(node).startPosition.row + 1,
      endLine: lastCodeRow(node) + 1,
      bases: (node.childForFieldName('superclasses')?.namedChildren ?? []).filter((c) => c.type !== 'comment').map((c) => c.text),
      decorators: decoratorsOf(node).map((d) => d.text.replace(/^@\s*/, '')),
      docstring,
      skeleton,
      documentation: units.documented === 0 ? 'none' : units.documented === units.total ? 'full' : 'partial',
      metrics: {
        totalLines: lines.total,
        codeLines: lines.code,
        commentLines: lines.comment,
        blankLines: lines.blank,
        commentToCodeRatio: lines.code ? Math.round((lines.comment / lines.code) * 1000) / 1000 : 0,
        methods: methods.length,
        cyclomatic: { total: cc.reduce((a, b) => a + b, 0), max: cc.length ? Math.max(...cc) : 0, perMethod },
        maxNesting,
        fanOut: { local: local.size, external: external.size, total: local.size + external.size },
        inheritanceDepth: depthOf(def, new Set()),
        children: childCount.get(def) ?? 0,
        programUnits: units.total,
        documentedUnits: units.documented,
        docstringCoverage: units.total ? Math.round((units.documented / units.total) * 1000) / 1000 : 0,
      },
    });
  }
  return out;
}
