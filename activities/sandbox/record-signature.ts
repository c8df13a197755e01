/**
 * A record that cannot pass whatever the harness does: its evaluation script's version of the
 * target (the sandboxed function or method) takes other parameters than the record's
 * `orig_func`, so the ground truth copied in as `<name>_new_implementation` is called the way
 * the tests call the sandboxed one and fails. Compared on parameter names, kinds and which have
 * defaults (annotations and default values may legitimately differ).
 */
import type { SyntaxNode } from '../python-parser';
import { dedentLike, findClass, functionNode, parse } from './new-implementation';

function parameterShape(def: SyntaxNode): string[] {
  const params = def.childForFieldName('parameters');
  return (params?.namedChildren ?? [])
    .filter((p) => p.type !== 'comment')
    .map((p) => {
      switch (p.type) {
        case 'identifier':
          return p.text;
        case 'typed_parameter':
          return p.namedChildren.find((c) => c.type !== 'type')?.text ?? p.text;
        case 'default_parameter':
        case 'typed_default_parameter':
          return `${p.childForFieldName('name')?.text ?? '?'}=`;
        case 'list_splat_pattern':
        case 'dictionary_splat_pattern':
          return p.text.replace(/\s+/g, '');
        case 'keyword_separator':
          return '*';
        case 'positional_separator':
          return '/';
        default:
          return p.text.replace(/\s+/g, '');
      }
    });
}

function firstFunction(nodes: SyntaxNode[], name: string): SyntaxNode | null {
  for (const n of nodes) {
    const def = functionNode(n);
    if (def && def.childForFieldName('name')?.text === name) return def;
  }
  return null;
}

/** Why the record cannot pass (another signature), or null when the two agree or either is not found. */
export function signatureMismatch(record: { func_name: string; eval_script: string; orig_func: string }): string | null {
  const parts = record.func_name.split('.');
  const name = parts[parts.length - 1]!;
  const classPath = parts.slice(0, -1);
  let sandboxed: SyntaxNode | null;
  let original: SyntaxNode | null;
  try {
    const script = parse(record.eval_script).rootNode;
    const scope = classPath.length > 0 ? (findClass(script, classPath)?.childForFieldName('body')?.namedChildren ?? []) : script.namedChildren;
    sandboxed = firstFunction(scope, name);
    original = firstFunction(parse(dedentLike(record.orig_func)).rootNode.namedChildren, name);
  } catch {
    return null;
  }
  if (!sandboxed || !original) return null;
  const a = parameterShape(sandboxed);
  const b = parameterShape(original);
  if (a.join(',') === b.join(',')) return null;
  return `the record's evaluation script defines ${record.func_name}(${a.join(', ')}) but its orig_func is ${name}(${b.join(', ')}): the ground truth cannot pass the script's tests`;
}
