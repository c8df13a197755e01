/**
 * The evaluation script with a candidate in it: the candidate goes in as
 * `<name>_new_implementation` exactly where the ground-truth harness puts the original
 * (methods inside their class), and its preamble (imports, helpers) at the top of the script.
 *
 * The script stands in for the repository: it defines what the repository's own modules
 * provided, and those modules are not there. So the preamble never rebinds a name the script
 * defines at its top level (the script's own code wins), and an import of the repository's own
 * modules is left out (reported as dropped); the names it would have bound are the script's, or,
 * when the script lacks one, listed as `unresolved` so a failure on it is put down to the
 * harness, not the model. Imports of the standard library and of third-party packages stay.
 */
import { importBindings, scopeOf } from '../analysis/bindings';
import type { SyntaxNode } from '../python-parser';
import { withNewImplementation } from '../sandbox/new-implementation';
import type { Candidate } from './candidate';
import { parsePython } from './function-source';

type ReadyCandidate = Extract<Candidate, { ok: true }>;

/** What the harness knows about the repository a script stands in for. */
export interface RepositoryNames {
  /** Top-level module names of the repository: `from <one of these>... import` is never kept in a preamble. */
  ownModules: ReadonlySet<string>;
}

export interface PlacedCandidate {
  script: string;
  /** Preamble statements left out, each with the reason (one line each). */
  dropped: string[];
  /** Names the candidate imports from the repository's own modules that the script does not define. */
  unresolved: string[];
}

/** At most this many dropped statements are reported per candidate (each cut to `DROPPED_CHARS`). */
const MAX_DROPPED = 10;
const DROPPED_CHARS = 200;

/** A module docstring, `from __future__` imports and comments must stay first. */
function mustStayFirst(node: SyntaxNode, index: number): boolean {
  if (node.type === 'comment') return true;
  if (node.type === 'future_import_statement' || /^from\s+__future__\b/.test(node.text)) return true;
  return index === 0 && node.type === 'expression_statement' && node.namedChildren[0]?.type === 'string';
}

/** What the script binds at its top level: for a name bound by `import m...`, the module's top-level name. */
export function scriptBindings(script: SyntaxNode): Map<string, { module: string | null }> {
  const out = new Map<string, { module: string | null }>();
  for (const [name, b] of scopeOf(script).bindings) {
    out.set(name, { module: b.kind === 'import' && b.member === null && b.level === 0 ? b.module.split('.')[0]! : null });
  }
  return out;
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, DROPPED_CHARS);

/** The top-level module an import statement names, and whether it is relative (`from . import x`). */
function importedModule(stmt: SyntaxNode, aliasNode: SyntaxNode | null): { top: string; relative: boolean } {
  if (stmt.type === 'import_statement') {
    const dotted = aliasNode?.type === 'aliased_import' ? aliasNode.childForFieldName('name')!.text : (aliasNode?.text ?? '');
    return { top: dotted.split('.')[0]!.trim(), relative: false };
  }
  const mod = stmt.childForFieldName('module_name');
  if (mod?.type === 'relative_import') return { top: '', relative: true };
  return { top: (mod?.text ?? '').split('.')[0]!.trim(), relative: false };
}

interface Filtered {
  text: string | null;
  dropped: string[];
  unresolved: string[];
}

/**
 * One import statement of a preamble, with the names it must not bind taken out: names the
 * script defines (unless it binds the same module, which loads a submodule and changes nothing),
 * and everything it imports from the repository's own modules.
 */
function filterImport(stmt: SyntaxNode, bound: Map<string, { module: string | null }>, repo: RepositoryNames): Filtered {
  const aliases = stmt.childrenForFieldName('name');
  const star = stmt.namedChildren.some((c) => c.type === 'wildcard_import');
  const { top, relative } = importedModule(stmt, aliases[0] ?? null);
  const own = relative || (stmt.type === 'import_from_statement' && repo.ownModules.has(top));
  if (star) return own ? { text: null, dropped: [`${oneLine(stmt.text)} (the repository's own module: the script defines what it provides)`], unresolved: [] } : { text: stmt.text, dropped: [], unresolved: [] };
  const { bindings } = importBindings(stmt);
  const kept: string[] = [];
  const dropped: string[] = [];
  const unresolved: string[] = [];
  aliases.forEach((alias, i) => {
    const name = bindings[i]?.name ?? alias.text;
    const moduleTop = stmt.type === 'import_statement' ? importedModule(stmt, alias).top : null;
    const ownModule = own || (moduleTop !== null && repo.ownModules.has(moduleTop));
    const script = bound.get(name);
    if (script) {
      const sameModule = moduleTop !== null && !ownModule && alias.type !== 'aliased_import' && script.module === moduleTop;
      // `import a` beside the script's own `import a`: already there, nothing is left out.
      if (sameModule && !alias.text.includes('.')) return;
      // `import a.b` beside the script's own `import a`: the same module, the submodule loaded.
      if (sameModule) kept.push(alias.text);
      else dropped.push(`${name} (the script defines it)`);
    } else if (ownModule) {
      dropped.push(`${name} (from the repository's own modules, which the script replaces)`);
      unresolved.push(name);
    } else kept.push(alias.text);
  });
  const summary = dropped.length ? [`${oneLine(stmt.text)}: left out ${dropped.join(', ')}`] : [];
  if (kept.length === 0) return { text: null, dropped: summary, unresolved };
  if (dropped.length === 0) return { text: stmt.text, dropped: [], unresolved };
  const head = stmt.type === 'import_statement' ? 'import' : `from ${stmt.childForFieldName('module_name')!.text} import`;
  return { text: `${head} ${kept.join(', ')}`, dropped: summary, unresolved };
}

/** The preamble's statements that may go into the script, and what was left out. */
export function filterPreamble(script: SyntaxNode, preamble: string, repo: RepositoryNames): Filtered {
  if (!preamble.trim()) return { text: '', dropped: [], unresolved: [] };
  const bound = scriptBindings(script);
  const root = parsePython(preamble).rootNode;
  const texts: string[] = [];
  const dropped: string[] = [];
  const unresolved: string[] = [];
  for (const n of root.namedChildren) {
    if (n.type === 'import_statement' || n.type === 'import_from_statement') {
      const f = filterImport(n, bound, repo);
      if (f.text !== null) texts.push(f.text);
      dropped.push(...f.dropped);
      unresolved.push(...f.unresolved);
      continue;
    }
    const d = n.type === 'decorated_definition' ? n.childForFieldName('definition') : n;
    const name = d?.type === 'function_definition' || d?.type === 'class_definition' ? d.childForFieldName('name')?.text : undefined;
    // A helper the script already has: the script's own code wins (silently: it is the same helper, or the script's is the one its tests need).
    if (name && bound.has(name)) continue;
    texts.push(n.text);
  }
  return { text: texts.join('\n\n'), dropped: dropped.slice(0, MAX_DROPPED), unresolved: [...new Set(unresolved)] };
}

/** The script with the preamble's admissible statements after its docstring, future imports and leading comments. */
export function insertPreamble(script: string, preamble: string, repo: RepositoryNames = { ownModules: new Set() }): PlacedCandidate {
  const root = parsePython(script).rootNode;
  const filtered = filterPreamble(root, preamble, repo);
  const kept = filtered.text;
  if (!kept) return { script, dropped: filtered.dropped, unresolved: filtered.unresolved };
  let at = 0;
  root.namedChildren.every((n, i) => {
    if (!mustStayFirst(n, i)) return false;
    at = n.endIndex;
    return true;
  });
  const before = script.slice(0, at);
  const after = script.slice(at).replace(/^\n/, '');
  return { script: `${before}${before === '' ? '' : '\n'}${kept}\n\n${after}`, dropped: filtered.dropped, unresolved: filtered.unresolved };
}

/** The eval script with the candidate as the new implementation; throws when it cannot be placed. */
export function candidateScript(evalScript: string, candidate: ReadyCandidate, qualname: string, repo: RepositoryNames = { ownModules: new Set() }): PlacedCandidate {
  const withCandidate = withNewImplementation(evalScript, candidate.code, qualname);
  return insertPreamble(withCandidate, candidate.preamble, repo);
}
