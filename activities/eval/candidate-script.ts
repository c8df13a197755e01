/**
 * The evaluation script with a candidate in it: the candidate goes in as
 * `<name>_new_implementation` exactly where the ground-truth harness puts the original
 * (methods inside their class), and its preamble (imports, helpers) at the top of the script.
 */
import type { SyntaxNode } from '../python-parser';
import { withNewImplementation } from '../sandbox/new-implementation';
import type { Candidate } from './candidate';
import { parsePython } from './function-source';

type ReadyCandidate = Extract<Candidate, { ok: true }>;

/** A module docstring, `from __future__` imports and comments must stay first. */
function mustStayFirst(node: SyntaxNode, index: number): boolean {
  if (node.type === 'comment') return true;
  if (node.type === 'future_import_statement' || /^from\s+__future__\b/.test(node.text)) return true;
  return index === 0 && node.type === 'expression_statement' && node.namedChildren[0]?.type === 'string';
}

function topLevelNames(root: SyntaxNode): Set<string> {
  const names = new Set<string>();
  for (const n of root.namedChildren) {
    const d = n.type === 'decorated_definition' ? n.childForFieldName('definition') : n;
    const name = d?.childForFieldName('name')?.text;
    if (name && (d!.type === 'function_definition' || d!.type === 'class_definition')) names.add(name);
  }
  return names;
}

/** Helper definitions the script already has are left out: the script's own code wins. */
function preambleFor(script: SyntaxNode, preamble: string): string {
  if (!preamble.trim()) return '';
  const existing = topLevelNames(script);
  const root = parsePython(preamble).rootNode;
  return root.namedChildren
    .filter((n) => {
      const d = n.type === 'decorated_definition' ? n.childForFieldName('definition') : n;
      const name = d?.type === 'function_definition' ? d.childForFieldName('name')?.text : undefined;
      return !(name && existing.has(name));
    })
    .map((n) => n.text)
    .join('\n\n');
}

export function insertPreamble(script: string, preamble: string): string {
  const root = parsePython(script).rootNode;
  const kept = preambleFor(root, preamble);
  if (!kept) return script;
  let at = 0;
  root.namedChildren.every((n, i) => {
    if (!mustStayFirst(n, i)) return false;
    at = n.endIndex;
    return true;
  });
  const before = script.slice(0, at);
  const after = script.slice(at).replace(/^\n/, '');
  return `${before}${before === '' ? '' : '\n'}${kept}\n\n${after}`;
}

/** The eval script with the candidate as the new implementation; throws when it cannot be placed. */
export function candidateScript(evalScript: string, candidate: ReadyCandidate, qualname: string): string {
  const withCandidate = withNewImplementation(evalScript, candidate.code, qualname);
  return insertPreamble(withCandidate, candidate.preamble);
}
