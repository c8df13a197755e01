/**
 * Classes as OpenClassGen describes them: a skeleton (class and method signatures with their
 * docstrings, bodies replaced by `pass`) and static metrics (size, complexity, coupling,
 * inheritance, documentation). Test classes are excluded by the paper's rule: a name starting or
 * ending with "Test" or "Case", or a path one of whose words is "test", "tests" or "unit".
 */
import { classAttributes, classCode, classUses, cohesion, nodeKey, type MethodMetrics } from './class-metrics';
import { signatureOf } from './extract';
import type { SyntaxNode } from './parser';
import type { Repository, ModuleInfo } from './repository';
import type { Definition, Resolver } from './resolver';
import { decoratorsOf, definitionsIn, docstringOf, lastCodeRow, outerNode } from './syntax';

/** OpenClassGen's metric groups; definitions in activities/analysis/README.md. */
export interface ClassMetrics {
  // Size.
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
  /** Names the class body binds (not methods or nested classes). */
  classAttributes: number;
  /** Distinct names assigned through `self` in the methods. */
  instanceAttributes: number;
  // Complexity (over the methods; 0 without methods).
  cyclomatic: { total: number; max: number; mean: number };
  essential: { total: number; max: number; mean: number };
  /** Deepest nesting of control statements inside a method (0: straight-line code). */
  maxNesting: number;
  // Coupling.
  /** Distinct places elsewhere in the repository (functions, methods, classes, module top levels) that name the class. */
  fanIn: number;
  /** Distinct names the class uses that it does not define: local (elsewhere in the repository) and external. */
  fanOut: { local: number; external: number; total: number };
  /** Distinct repository definitions (functions, classes, methods, variables) the class's code names. */
  dependencies: number;
  // Inheritance and cohesion.
  /** Longest chain of in-repository base classes above the class. */
  inheritanceDepth: number;
  /** Classes in the repository that name it as a direct base. */
  children: number;
  /** Coupling between objects: other repository classes it uses or that name it. */
  cbo: number;
  /** LCOM4: connected groups of methods (constructors left out). */
  lcom4: number;
  /** Henderson-Sellers' LCOM*: 0 cohesive .. 1 not; null below two methods or without attributes. */
  lcomStar: number | null;
  // Documentation.
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
  /** 0 for the class Python binds; 1, 2, ... for earlier classes of the same name in the file. */
  occurrence: number;
  bases: string[];
  decorators: string[];
  docstring: string | null;
  skeleton: string;
  metrics: ClassMetrics;
  /** Per method (directly in the class body), in source order. */
  methods: MethodMetrics[];
  /** 'full' | 'partial' | 'none': OpenClassGen's documentation levels. */
  documentation: 'full' | 'partial' | 'none';
}

/**
 * The words of a path: each folder and the file's name without `.py`, split at `_`, `-`, `.` and
 * camel-case humps (`unit_tests/TestUtils.py` -> unit, tests, test, utils), lower-cased.
 */
export function pathWords(path: string): string[] {
  return path
    .replace(/\.pyi?$/, '')
    .split('/')
    .flatMap((segment) => segment.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2').split(/[\s_.-]+/))
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

/**
 * The words that mark a test path: the paper's "test(s)" and "unit", and the compounds test
 * folders and files are named by (`unittest`, `unittests`, pytest's `conftest`). A word, not a
 * substring: `shortest.py` and `community/` are not test paths.
 */
const TEST_PATH_WORDS = new Set(['test', 'tests', 'unit', 'unittest', 'unittests', 'conftest']);

export function isOpenClassGenTestClass(path: string, name: string): boolean {
  if (/^(Test|Case)|(Test|Case)$/.test(name)) return true;
  return pathWords(path).some((w) => TEST_PATH_WORDS.has(w));
}

/** The class's lines as written, less the indentation of its first line (a nested class reads as top-level code). */
export function classSource(lines: readonly string[], startLine: number, endLine: number): string {
  const span = lines.slice(startLine - 1, endLine);
  const indent = /^[ \t]*/.exec(span[0] ?? '')![0];
  return span.map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l)).join('\n');
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

/** Lines of the class, given the rows of its comments and the bodies of the class and its functions (classCode). */
function lineCounts(module: ModuleInfo, cls: SyntaxNode, found: { commentRows: number[]; bodies: SyntaxNode[] }) {
  const outer = outerNode(cls);
  const first = outer.startPosition.row;
  const last = lastCodeRow(cls);
  const commentRows = new Set<number>(found.commentRows);
  for (const body of found.bodies) {
    const doc = docstringNode(body);
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

const mean = (values: number[]) => (values.length ? Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 1000) / 1000 : 0);
const summed = (values: number[]) => ({ total: values.reduce((a, b) => a + b, 0), max: values.length ? Math.max(...values) : 0, mean: mean(values) });

/** Every class of the repository; test classes (OpenClassGen's rule) are left out unless `includeTestClasses`. */
export function classesOf(repo: Repository, resolver: Resolver, options: { includeTestClasses?: boolean } = {}): ClassInfo[] {
  const all: { module: ModuleInfo; node: SyntaxNode; qualname: string; def: Definition }[] = [];
  for (const module of repo.modules.values()) {
    const visit = (container: SyntaxNode, prefix: string[], owner: Definition | null) => {
      for (const def of definitionsIn(container)) {
        if (def.type !== 'class_definition') continue;
        const name = def.childForFieldName('name')!.text;
        const qualname = [...prefix, name].join('.');
        let d = resolver.definition(module, qualname, 'class', def, owner);
        // A class defined again under the same name shares the cached definition: the other
        // definition gets one of its own.
        if (d.node.id !== def.id) d = { ...d, node: def, startLine: outerNode(def).startPosition.row + 1, endLine: lastCodeRow(def) + 1 };
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
  // Of several classes of one name in one file, Python binds the last (occurrence 0).
  const later = new Map<string, number>();
  const occurrence = new Array<number>(all.length);
  for (let i = all.length - 1; i >= 0; i--) {
    const key = `${all[i]!.module.path}::${all[i]!.qualname}`;
    occurrence[i] = later.get(key) ?? 0;
    later.set(key, occurrence[i]! + 1);
  }

  const kept = all.map((c, i) => ({ ...c, occurrence: occurrence[i]! })).filter((c) => options.includeTestClasses || !isOpenClassGenTestClass(c.module.path, c.node.childForFieldName('name')!.text));
  const uses = classUses(repo, resolver, kept.map((c) => c.def));
  const out: ClassInfo[] = [];
  for (const { module, node, qualname, def, occurrence } of kept) {
    const name = node.childForFieldName('name')!.text;
    const body = node.childForFieldName('body');
    const units = { total: 0, documented: 0 };
    const skeleton = skeletonLines(module, node, '', units).join('\n');
    const methodNodes = body ? definitionsIn(body).filter((d) => d.type === 'function_definition') : [];
    const code = classCode(resolver, module, node, def, methodNodes);
    const methods = code.methods;
    const receiver = methodNodes.map((_, i) => ({ name: methods[i]!.name, use: code.receiver[i]! }));
    // Assigning through a property (`self.value = ...`) sets no attribute of the instance's own.
    const methodNames = new Set(methods.map((m) => m.name));
    const instanceAttributes = new Set<string>();
    for (const r of receiver) for (const a of r.use.assigned) if (!methodNames.has(a)) instanceAttributes.add(a);
    const { lcom4, lcomStar } = cohesion(receiver);
    const use = uses.get(def)!;
    const coupled = new Set([...code.classes, ...use.classes]);
    coupled.delete(nodeKey(module, node));
    const lines = lineCounts(module, node, code);
    const docstring = docstringOf(body);
    out.push({
      path: module.path,
      qualname,
      name,
      startLine: outerNode(node).startPosition.row + 1,
      endLine: lastCodeRow(node) + 1,
      occurrence,
      bases: (node.childForFieldName('superclasses')?.namedChildren ?? []).filter((c) => c.type !== 'comment').map((c) => c.text),
      decorators: decoratorsOf(node).map((d) => d.text.replace(/^@\s*/, '')),
      docstring,
      skeleton,
      documentation: units.documented === 0 ? 'none' : units.documented === units.total ? 'full' : 'partial',
      methods,
      metrics: {
        totalLines: lines.total,
        codeLines: lines.code,
        commentLines: lines.comment,
        blankLines: lines.blank,
        commentToCodeRatio: lines.code ? Math.round((lines.comment / lines.code) * 1000) / 1000 : 0,
        methods: methods.length,
        classAttributes: classAttributes(node).length,
        instanceAttributes: instanceAttributes.size,
        cyclomatic: summed(methods.map((m) => m.cyclomatic)),
        essential: summed(methods.map((m) => m.essential)),
        maxNesting: Math.max(0, ...methods.map((m) => m.maxNesting)),
        fanIn: use.units.size,
        fanOut: { local: code.local, external: code.external, total: code.local + code.external },
        dependencies: code.dependencies.length,
        inheritanceDepth: depthOf(def, new Set()),
        children: childCount.get(def) ?? 0,
        cbo: coupled.size,
        lcom4,
        lcomStar,
        programUnits: units.total,
        documentedUnits: units.documented,
        docstringCoverage: units.total ? Math.round((units.documented / units.total) * 1000) / 1000 : 0,
      },
    });
  }
  return out;
}
