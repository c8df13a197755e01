/** Pieces of an evaluation script, found with tree-sitter (the sandboxed copy of the target). */
import type Parser from 'tree-sitter';
import { createPythonParser } from '../python-parser';
import { findDefinition } from '../llm/sanity';

let parser: Parser | null = null;

/** Source text of `name` or `Class.method` as defined in the script (decorators included), or null. */
export function definitionSource(script: string, qualname: string): string | null {
  parser ??= createPythonParser();
  const def = findDefinition(parser.parse(script).rootNode, qualname);
  if (!def) return null;
  const node = def.parent?.type === 'decorated_definition' ? def.parent : def;
  // Keep the first line's indentation so the text parses the same way on its own.
  const lineStart = script.lastIndexOf('\n', node.startIndex - 1) + 1;
  return script.slice(lineStart, node.endIndex);
}
