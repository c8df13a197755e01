/** Pieces of an evaluation script, found with tree-sitter (the sandboxed copy of the target). */
import type Parser from 'tree-sitter';
import { createPythonParser } from '../python-parser';
import { findClassDefinition, findDefinition } from '../llm/sanity';

let parser: Parser | null = null;

/** Source text of `name` or `Class.method` as defined in the script (decorators included), or null. */
export function definitionSource(script: string, qualname: string): string | null {
  parser ??= createPythonParser();
  return sourceOf(script, findDefinition(parser.parse(script).rootNode, qualname));
}

/** Source text of the top-level class `name` as defined in the script (decorators included), or null. */
export function classDefinitionSource(script: string, name: string): string | null {
  parser ??= createPythonParser();
  return sourceOf(script, findClassDefinition(parser.parse(script, undefined, { bufferSize: Math.max(64 * 1024, script.length * 2 + 1024) }).rootNode, name));
}

function sourceOf(script: string, def: Parser.SyntaxNode | undefined): string | null {
  if (!def) return null;
  const node = def.parent?.type === 'decorated_definition' ? def.parent : def;
  // Keep the first line's indentation so the text parses the same way on its own.
  const lineStart = script.lastIndexOf('\n', node.startIndex - 1) + 1;
  return script.slice(lineStart, node.endIndex);
}
