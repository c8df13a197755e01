/**
 * The context text of a target: the code of its local dependencies grouped by file under
 * `## path` headers, files in dependency order (what is needed comes first, the target's own
 * file last), definitions in source order inside a file, each file's imports on top. Classes
 * are rendered as a shell (header, docstring, class attributes) holding only the members that
 * are needed.
 */
import { importBindings } from './bindings';
import type { SyntaxNode } from './parser';
import type { ModuleInfo } from './repository';
import type { Definition, Resolver } from './resolver';
import { lastCodeRow, outerNode, unwrapDefinition } from './syntax';

/** A rough token count (about four characters per token for code), used for budgets only. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function endRow(node: SyntaxNode): number {
  if (node.type === 'function_definition' || node.type === 'class_definition') return lastCodeRow(node);
  const end = node.endPosition;
  return end.column === 0 && end.row > node.startPosition.row ? end.row - 1 : end.row;
}

/** Last row of a definition: its span, except a statement ending at the start of the next line. */
function endRowOf(def: Definition): number {
  return def.kind === 'variable' ? endRow(def.node) : def.endLine - 1;
}

function rows(module: ModuleInfo, from: number, to: number): string[] {
  return module.lines.slice(from, to + 1);
}

function dedent(lines: string[], by: number): string[] {
  if (by <= 0) return lines;
  return lines.map((l) => (l.slice(0, by).trim() === '' ? l.slice(by) : l.trimStart()));
}

const costCache = new WeakMap<Definition, number>();

/**
 * Estimated tokens a definition adds to a context: its own lines, or for a class its shell
 * (header, docstring, class attributes) since its members are counted as they are included.
 */
export function definitionTokens(def: Definition): number {
  let cost = costCache.get(def);
  if (cost === undefined) {
    if (def.kind === 'class') {
      const layout = classLayout(def.module, def.node);
      const parts = layout.header ? [layout.header, ...layout.members.filter((m) => m.kind === 'statement').map((m) => (m as { rows: [number, number] }).rows)] : [layout.whole];
      cost = parts.reduce((n, [a, b]) => n + estimateTokens(rows(def.module, a, b).join('\n')), 0);
    } else {
      cost = estimateTokens(rows(def.module, def.startLine - 1, endRowOf(def)).join('\n'));
    }
    costCache.set(def, cost);
  }
  return cost;
}

function topLevel(def: Definition): Definition {
  let d = def;
  while (d.owner) d = d.owner;
  return d;
}

interface ClassLayout {
  /** Rows of the decorators and the class line(s); null when the class fits on one line. */
  header: [number, number] | null;
  whole: [number, number];
  indent: number;
  members: ({ kind: 'function'; name: string; rows: [number, number] } | { kind: 'class'; name: string; node: SyntaxNode } | { kind: 'statement'; rows: [number, number] })[];
}

const layoutCache = new WeakMap<ModuleInfo, Map<number, ClassLayout>>();

/** Where the parts of a class are, computed once per class node (rendering happens per target). */
function classLayout(module: ModuleInfo, cls: SyntaxNode): ClassLayout {
  let perModule = layoutCache.get(module);
  if (!perModule) layoutCache.set(module, (perModule = new Map()));
  const cached = perModule.get(cls.id);
  if (cached) return cached;
  const outer = outerNode(cls);
  const body = cls.childForFieldName('body');
  const whole: [number, number] = [outer.startPosition.row, endRow(cls)];
  let layout: ClassLayout;
  if (!body || body.startPosition.row === cls.startPosition.row) {
    layout = { header: null, whole, indent: 0, members: [] };
  } else {
    let first = body.firstNamedChild;
    while (first && first.type === 'comment') first = first.nextNamedSibling;
    const firstRow = (first ?? body).startPosition.row;
    layout = { header: [outer.startPosition.row, firstRow - 1], whole, indent: (first ?? body).startPosition.column, members: [] };
    for (let stmt = body.firstNamedChild; stmt; stmt = stmt.nextNamedSibling) {
      if (stmt.type === 'comment') continue;
      const def = unwrapDefinition(stmt);
      if (!def) {
        layout.members.push({ kind: 'statement', rows: [stmt.startPosition.row, endRow(stmt)] });
        continue;
      }
      const name = def.childForFieldName('name')?.text ?? '';
      if (def.type === 'function_definition') layout.members.push({ kind: 'function', name, rows: [stmt.startPosition.row, endRow(def)] });
      else layout.members.push({ kind: 'class', name, node: def });
    }
  }
  perModule.set(cls.id, layout);
  return layout;
}

/** Class shell with the needed members; `members` holds qualnames of included methods and nested classes. */
function renderClass(module: ModuleInfo, cls: SyntaxNode, qualname: string, members: Set<string>): string[] {
  const layout = classLayout(module, cls);
  if (!layout.header) return rows(module, layout.whole[0], layout.whole[1]);
  const out = rows(module, layout.header[0], layout.header[1]);
  const headerLength = out.length;
  for (const m of layout.members) {
    if (m.kind === 'statement') {
      out.push(...rows(module, m.rows[0], m.rows[1]));
      continue;
    }
    const q = `${qualname}.${m.name}`;
    const include = m.kind === 'function' ? members.has(q) : [...members].some((x) => x === q || x.startsWith(`${q}.`));
    if (!include) continue;
    // Members are separated by a blank line, as PEP 8 lays out a class.
    if (out.length > headerLength && out[out.length - 1]!.trim() !== '') out.push('');
    out.push(...(m.kind === 'function' ? rows(module, m.rows[0], m.rows[1]) : renderClass(module, m.node, q, members)));
  }
  if (out.length === headerLength) out.push(`${' '.repeat(layout.indent)}pass`);
  return out;
}

function importNames(stmt: SyntaxNode): string[] {
  const names: string[] = [];
  const stmts = stmt.type === 'import_statement' || stmt.type === 'import_from_statement' ? [stmt] : stmt.descendantsOfType(['import_statement', 'import_from_statement']);
  for (const s of stmts) {
    const { bindings, star } = importBindings(s);
    names.push(...bindings.map((b) => b.name));
    if (star) names.push('*');
  }
  return names;
}

interface ImportLines {
  text: string;
  /** First and last row of the statement (an `if TYPE_CHECKING:` or try/except block may hold definitions too). */
  rows: [number, number];
  names: string[];
  future: boolean;
}

const importCache = new WeakMap<ModuleInfo, ImportLines[]>();

/** The module's top-level import statements with the names each binds (computed once per module). */
function importsOf(resolver: Resolver, module: ModuleInfo): ImportLines[] {
  let list = importCache.get(module);
  if (!list) {
    list = resolver.scope(module).importStatements.map((stmt) => ({
      text: rows(module, stmt.startPosition.row, endRow(stmt)).join('\n'),
      rows: [stmt.startPosition.row, endRow(stmt)],
      names: importNames(stmt),
      future: stmt.type === 'future_import_statement',
    }));
    importCache.set(module, list);
  }
  return list;
}

export interface RenderInput {
  resolver: Resolver;
  target: Definition;
  /** Dependencies to render (the target is added when includeTarget is set). */
  defs: Definition[];
  edges: Map<Definition, Definition[]>;
  includeTarget: boolean;
  /**
   * Whether a definition already shown is left out (inside a shown statement or import block, or
   * the same text in another file); default on. Off only to measure what it saves.
   */
  dedupe?: boolean;
}

/** Files in dependency order: post-order from the target, so a file comes after what it needs. */
function fileOrder(input: RenderInput, included: Set<Definition>): ModuleInfo[] {
  const order: ModuleInfo[] = [];
  const seenModules = new Set<ModuleInfo>();
  const visited = new Set<Definition>();
  const stack: [Definition, number][] = [[input.target, 0]];
  visited.add(input.target);
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    const [def, i] = top;
    const next = input.edges.get(def) ?? [];
    if (i < next.length) {
      top[1]++;
      const n = next[i]!;
      if (!visited.has(n) && included.has(n)) {
        visited.add(n);
        stack.push([n, 0]);
      }
      continue;
    }
    stack.pop();
    if (def !== input.target && !seenModules.has(def.module)) {
      seenModules.add(def.module);
      order.push(def.module);
    }
  }
  for (const d of included) {
    if (!seenModules.has(d.module)) {
      seenModules.add(d.module);
      order.push(d.module);
    }
  }
  const targetModule = input.target.module;
  return [...order.filter((m) => m !== targetModule), targetModule];
}

/** One file of a context: its path and the code shown from it. */
export interface ContextBlock {
  path: string;
  code: string;
}

/**
 * Context text from its blocks: `## path` then the code, blocks separated by a blank line.
 * `fenced` wraps each block in a ```python fence, the way RepoST's published contexts look.
 */
export function formatContext(blocks: ContextBlock[], options: { fenced?: boolean } = {}): string {
  if (options.fenced) return blocks.map((b) => `\`\`\`python\n## ${b.path}\n${b.code}\n\`\`\`\n`).join('\n\n');
  return blocks.map((b) => `## ${b.path}\n${b.code}\n`).join('\n');
}

export function renderContext(input: RenderInput): string {
  return formatContext(renderContextBlocks(input));
}

export function renderContextBlocks(input: RenderInput): ContextBlock[] {
  const included = new Set(input.defs);
  const all = new Set(included);
  if (input.includeTarget) all.add(input.target);
  const blocks: ContextBlock[] = [];
  // Each definition's text appears once in a context, even when two files hold the same copy.
  const shownTexts = new Set<string>();
  const dedupe = input.dedupe ?? true;
  for (const module of fileOrder(input, included)) {
    const defs = [...all].filter((d) => d.module === module);
    const members = new Set(defs.filter((d) => d.owner).map((d) => d.qualname));
    const tops = new Map<number, { row: number; end: number; lines: string[] }>();
    for (const d of defs) {
      const top = topLevel(d);
      // Definitions sharing a statement (`a, b = ...`) are rendered once.
      const row = top.startLine - 1;
      if (tops.has(row)) continue;
      const lines = top.kind === 'class' ? renderClass(module, top.node, top.qualname, members) : rows(module, row, endRowOf(top));
      const first = module.lines[row] ?? '';
      tops.set(row, { row, end: endRowOf(top), lines: dedent(lines, first.length - first.trimStart().length) });
    }
    // A definition inside a statement already shown (a loop, a with block) is not shown again.
    const chunks: { row: number; end: number; lines: string[] }[] = [];
    for (const t of [...tops.values()].sort((a, b) => a.row - b.row || b.end - a.end)) {
      const last = chunks[chunks.length - 1];
      if (dedupe && last && t.end <= last.end) continue;
      chunks.push(t);
    }
    const used = new Set(chunks.map((c) => c.lines.join('\n')).join('\n').match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []);
    const targetRow = module === input.target.module ? topLevel(input.target).startLine - 1 : -1;
    const imports = importsOf(input.resolver, module).filter((imp) => module === input.target.module || imp.future || imp.names.some((n) => n === '*' || used.has(n)));
    // An import block that holds definitions (`if TYPE_CHECKING: ... else: def ...`) shows them
    // already: they are not repeated after it.
    const code = chunks
      .filter((c) => !dedupe || !imports.some((imp) => imp.rows[0] <= c.row && c.end <= imp.rows[1]))
      .filter((c) => {
        if (!dedupe) return true;
        const key = c.lines.join('\n').trim();
        if (shownTexts.has(key) && !(c.row <= targetRow && targetRow <= c.end)) return false;
        shownTexts.add(key);
        return true;
      })
      .map((c) => c.lines.join('\n'));
    const parts = [...(imports.length ? [imports.map((imp) => imp.text).join('\n')] : []), ...code];
    if (parts.length === 0) continue;
    blocks.push({ path: module.path, code: parts.join('\n\n') });
  }
  return blocks;
}
