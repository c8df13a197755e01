/**
 * What the model sees when asked to implement a target: RepoST's dependency-only context (the
 * local definitions the target needs, `## path` blocks) with the target's body taken out. Its
 * signature stays where it belongs, with the original docstring, none, or a generated one.
 */
import type { EvalRecord } from './dataset';
import { bodyIndent, docstringLiteral, docstringStatement, findDefinition, functionParts, parsePython, signatureColon } from './function-source';
import type { DocstringMode } from './settings';

export interface PromptContextOptions {
  mode: DocstringMode;
  /** The generated docstring (mode `generated`). */
  generated?: string;
}

/** The line that stands where the body was. */
export function bodyPlaceholder(indent: string): string {
  return `${indent}...  # the body to implement`;
}

interface Block {
  header: string | null;
  path: string | null;
  code: string;
}

/** Splits a context into its `## path` blocks (text before the first header is a block without one). */
export function contextBlocks(context: string): Block[] {
  const blocks: Block[] = [];
  let current: Block = { header: null, path: null, code: '' };
  const lines: string[] = [];
  const flush = () => {
    current.code = lines.join('\n');
    if (current.header !== null || current.code.trim()) blocks.push(current);
    lines.length = 0;
  };
  for (const line of context.split('\n')) {
    const m = /^## (\S.*)$/.exec(line);
    if (m) {
      flush();
      current = { header: line, path: m[1]!.trim(), code: '' };
    } else lines.push(line);
  }
  flush();
  return blocks;
}

function joinBlocks(blocks: Block[]): string {
  return blocks.map((b) => (b.header === null ? b.code : `${b.header}\n${b.code}`)).join('\n');
}

/** The docstring to show, indented for a body at `indent` (null: none). */
function shownDocstring(original: string | null, options: PromptContextOptions, indent: string): string | null {
  if (options.mode === 'none') return null;
  if (options.mode === 'generated') {
    if (!options.generated?.trim()) throw new Error('docstring mode "generated" needs the generated docstring');
    return docstringLiteral(options.generated, indent);
  }
  return original;
}

/** The code block with the target's body replaced, or null when the block does not define it. */
function withoutBody(code: string, qualname: string, options: PromptContextOptions): string | null {
  const def = findDefinition(parsePython(code).rootNode, qualname);
  if (!def) return null;
  const indent = bodyIndent(def, code);
  const doc = docstringStatement(def);
  const shown = shownDocstring(doc ? doc.text : null, options, indent);
  const body = def.childForFieldName('body')!;
  const lines = [...(shown ? [indent + shown] : []), bodyPlaceholder(indent)];
  return `${code.slice(0, signatureColon(def).endIndex)}\n${lines.join('\n')}${code.slice(body.endIndex)}`;
}

/**
 * The context with the target's body removed. The target is looked for in its own file's block
 * (the last block naming its path, else the last block); a context that lacks it gets the
 * signature appended under the target's path, so the model always sees what to write.
 */
export function promptContext(record: Pick<EvalRecord, 'context' | 'qualname' | 'path' | 'origFunc'>, options: PromptContextOptions): string {
  const blocks = contextBlocks(record.context);
  const own = [...blocks.keys()].filter((i) => blocks[i]!.path === record.path);
  const order = [...own.reverse(), ...[...blocks.keys()].reverse().filter((i) => !own.includes(i))];
  for (const i of order) {
    const replaced = withoutBody(blocks[i]!.code, record.qualname, options);
    if (replaced !== null) {
      blocks[i] = { ...blocks[i]!, code: replaced };
      return joinBlocks(blocks);
    }
  }
  const parts = functionParts(record.origFunc);
  const shown = shownDocstring(parts.docstring, options, '    ');
  const stub = `${parts.header}\n${shown ? `    ${shown}\n` : ''}${bodyPlaceholder('    ')}\n`;
  return `${joinBlocks(blocks).replace(/\s*$/, '')}\n\n## ${record.path}\n${stub}`;
}

/** Whether the ground truth has a docstring (RepoST's Table 8 is on that subset). */
export function hasDocstring(origFunc: string): boolean {
  try {
    return functionParts(origFunc).docstring !== null;
  } catch {
    return false;
  }
}
