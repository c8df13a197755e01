/**
 * Module-level name bindings: what each top-level name of a module is (a function, a class, an
 * assigned variable, or an imported name), plus star imports, `__all__` and dynamic imports.
 */
import type { SyntaxNode } from './parser';
import { STATEMENT_CONTAINERS, unwrapDefinition } from './syntax';

export type Binding =
  | { kind: 'function' | 'class'; name: string; node: SyntaxNode }
  | { kind: 'variable'; name: string; node: SyntaxNode }
  /** `import a.b` binds `a` to module `a`; `import a.b as c` binds `c` to `a.b`; `from m import n` binds n to `n` of `m`. */
  | { kind: 'import'; name: string; node: SyntaxNode; level: number; module: string; member: string | null };

export interface StarImport {
  level: number;
  module: string;
  node: SyntaxNode;
}

export interface Scope {
  bindings: Map<string, Binding>;
  starImports: StarImport[];
  /** The module's `__all__` when it is a literal list or tuple of strings. */
  all: string[] | null;
  /** Top-level statements that contain an import (import lines, try/except ImportError blocks). */
  importStatements: SyntaxNode[];
}

/** Identifiers bound by an assignment target (`a`, `a, *b`, `(a, [b, c])`); attributes and subscripts bind nothing. */
export function targetNames(node: SyntaxNode | null, out: string[] = []): string[] {
  if (!node) return out;
  switch (node.type) {
    case 'identifier':
      out.push(node.text);
      break;
    case 'pattern_list':
    case 'tuple_pattern':
    case 'list_pattern':
    case 'tuple':
    case 'list':
    case 'list_splat_pattern':
    case 'parenthesized_expression':
    case 'as_pattern_target':
      for (const c of node.namedChildren) targetNames(c, out);
      break;
    default:
      break;
  }
  return out;
}

/** Import bindings of one import statement (module-level or inside a function). */
export function importBindings(stmt: SyntaxNode): { bindings: Binding[]; star: StarImport | null } {
  const bindings: Binding[] = [];
  if (stmt.type === 'import_statement') {
    for (const n of stmt.childrenForFieldName('name')) {
      if (n.type === 'aliased_import') {
        const dotted = n.childForFieldName('name')!.text;
        bindings.push({ kind: 'import', name: n.childForFieldName('alias')!.text, node: stmt, level: 0, module: dotted, member: null });
      } else {
        const first = n.text.split('.')[0]!.trim();
        bindings.push({ kind: 'import', name: first, node: stmt, level: 0, module: first, member: null });
      }
    }
    return { bindings, star: null };
  }
  if (stmt.type !== 'import_from_statement') return { bindings, star: null };
  const mod = stmt.childForFieldName('module_name');
  let level = 0;
  let module = '';
  if (mod?.type === 'relative_import') {
    const prefix = mod.namedChildren.find((c) => c.type === 'import_prefix');
    level = prefix ? prefix.text.length : 0;
    module = mod.namedChildren.find((c) => c.type === 'dotted_name')?.text ?? '';
  } else if (mod) {
    module = mod.text;
  }
  module = module.replace(/\s+/g, '');
  if (stmt.namedChildren.some((c) => c.type === 'wildcard_import')) return { bindings, star: { level, module, node: stmt } };
  for (const n of stmt.childrenForFieldName('name')) {
    if (n.type === 'aliased_import') {
      bindings.push({ kind: 'import', name: n.childForFieldName('alias')!.text, node: stmt, level, module, member: n.childForFieldName('name')!.text });
    } else {
      bindings.push({ kind: 'import', name: n.text, node: stmt, level, module, member: n.text });
    }
  }
  return { bindings, star: null };
}

function literalStrings(node: SyntaxNode | null): string[] | null {
  if (!node || (node.type !== 'list' && node.type !== 'tuple')) return null;
  const out: string[] = [];
  for (const c of node.namedChildren) {
    if (c.type !== 'string') return null;
    out.push(c.text.replace(/^[a-zA-Z]*(['"]{1,3})([\s\S]*)\1$/, '$2'));
  }
  return out;
}

/** The bindings of the statements of a module or of a class body. */
export function scopeOf(container: SyntaxNode): Scope {
  const scope: Scope = { bindings: new Map(), starImports: [], all: null, importStatements: [] };
  const bind = (b: Binding) => {
    // Python keeps the last binding, but a fallback in `except ImportError:` (`x = None`, an
    // optional dependency) must not hide the definition the try block bound first.
    if (scope.bindings.has(b.name) && insideExcept(b.node)) return;
    scope.bindings.set(b.name, b);
  };
  const visit = (node: SyntaxNode, top: SyntaxNode | null) => {
    for (const stmt of node.namedChildren) {
      const topStmt = top ?? stmt;
      const def = unwrapDefinition(stmt);
      if (def) {
        const name = def.childForFieldName('name')?.text;
        if (name) bind({ kind: def.type === 'class_definition' ? 'class' : 'function', name, node: def });
        continue;
      }
      switch (stmt.type) {
        case 'import_statement':
        case 'import_from_statement':
        case 'future_import_statement': {
          if (!scope.importStatements.includes(topStmt)) scope.importStatements.push(topStmt);
          const { bindings, star } = importBindings(stmt);
          bindings.forEach(bind);
          if (star) scope.starImports.push(star);
          break;
        }
        case 'expression_statement': {
          for (const expr of stmt.namedChildren) {
            let a: SyntaxNode | null = expr;
            while (a && (a.type === 'assignment' || a.type === 'augmented_assignment')) {
              for (const name of targetNames(a.childForFieldName('left'))) {
                bind({ kind: 'variable', name, node: stmt });
                if (name === '__all__') scope.all = literalStrings(a.childForFieldName('right')) ?? scope.all;
              }
              a = a.childForFieldName('right');
            }
          }
          break;
        }
        case 'for_statement':
          for (const name of targetNames(stmt.childForFieldName('left'))) bind({ kind: 'variable', name, node: topStmt });
          visit(stmt.childForFieldName('body')!, topStmt);
          break;
        case 'with_statement':
          for (const item of stmt.descendantsOfType('as_pattern_target')) for (const name of targetNames(item)) bind({ kind: 'variable', name, node: topStmt });
          visit(stmt.childForFieldName('body')!, topStmt);
          break;
        default:
          if (STATEMENT_CONTAINERS.has(stmt.type)) visit(stmt, topStmt);
          break;
      }
    }
  };
  visit(container, null);
  return scope;
}

function insideExcept(node: SyntaxNode): boolean {
  for (let p = node.parent; p; p = p.parent) {
    if (p.type === 'except_clause') return true;
    if (p.type === 'module' || p.type === 'function_definition' || p.type === 'class_definition') return false;
  }
  return false;
}
