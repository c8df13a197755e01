/**
 * A candidate implementation taken from a model's answer: the last code block, holding either
 * the target's definition or a bare body (which gets the ground truth's signature and is
 * indented under it). Imports and helper functions next to the definition come along as a
 * preamble for the top of the evaluation script.
 */
import { fencedBlocks } from '../llm/parsers';
import type { SyntaxNode } from '../python-parser';
import { dedentLike, findDefinition, functionParts, outerDefinition, parsePython } from './function-source';

export type Candidate =
  | {
      ok: true;
      /** The target's definition (decorators included), dedented, under the target's own name. */
      code: string;
      /** Imports and helper functions to place at the top of the script ('' if none). */
      preamble: string;
      /** True when the answer held only a body and the signature came from the ground truth. */
      bare: boolean;
    }
  | { ok: false; detail: string };

const PYTHON_LANGS = new Set(['python', 'python3', 'py', '']);

/** The code the answer offers: its last Python (or unlabelled) block, closed or cut off. */
export function lastCodeBlock(answer: string): string | null {
  const blocks = fencedBlocks(answer).filter((b) => PYTHON_LANGS.has(b.lang) && b.body.trim());
  return blocks.length ? blocks[blocks.length - 1]!.body : null;
}

function unwrap(node: SyntaxNode): SyntaxNode | null {
  return node.type === 'decorated_definition' ? node.childForFieldName('definition') : node;
}

/** The target's definition in the block: by qualified name, at the top level, or in any class. */
function targetDefinition(root: SyntaxNode, qualname: string, name: string): SyntaxNode | null {
  const byPath = findDefinition(root, qualname);
  if (byPath) return byPath;
  const tops = root.namedChildren.map(unwrap).filter((n): n is SyntaxNode => n !== null);
  const top = tops.find((n) => n.type === 'function_definition' && n.childForFieldName('name')?.text === name);
  if (top) return top;
  for (const cls of tops.filter((n) => n.type === 'class_definition')) {
    const inner = findDefinition(root, `${cls.childForFieldName('name')!.text}.${name}`);
    if (inner) return inner;
  }
  return null;
}

function isImport(node: SyntaxNode): boolean {
  return (node.type === 'import_statement' || node.type === 'import_from_statement') && !/^from\s+__future__\b/.test(node.text);
}

function indentLines(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((l) => (l.trim() ? prefix + l : ''))
    .join('\n');
}

/**
 * Whether a line of `text` starts (after white space) with `def <name>(` or `async def <name>(`.
 * The name comes from a dataset and is compared as text, never made into a pattern.
 */
export function definesAtLineStart(text: string, name: string): boolean {
  const afterSpace = (s: string, word: string): string | null => (s.startsWith(word) && s.length > word.length && s[word.length]!.trim() === '' ? s.slice(word.length).trimStart() : null);
  for (const line of text.split('\n')) {
    let rest = line.trimStart();
    rest = afterSpace(rest, 'async') ?? rest;
    const afterDef = afterSpace(rest, 'def');
    if (afterDef === null || !afterDef.startsWith(name)) continue;
    if (afterDef.slice(name.length).trimStart().startsWith('(')) return true;
  }
  return false;
}

export function extractCandidate(answer: string, target: { qualname: string; origFunc: string }): Candidate {
  const name = target.qualname.split('.').pop()!;
  let code = lastCodeBlock(answer);
  if (code === null) {
    // Without a code block only an answer that is itself the definition counts.
    if (!definesAtLineStart(answer, name)) {
      return { ok: false, detail: answer.trim() ? 'the answer has no code block' : 'the answer is empty' };
    }
    code = answer;
  }
  const text = dedentLike(code.replace(/\r\n/g, '\n')).trimEnd();
  const root = parsePython(text).rootNode;
  const def = targetDefinition(root, target.qualname, name);
  if (def) {
    const outer = outerDefinition(def);
    const inClass = outer.parent !== root;
    const helpers = root.namedChildren.filter((n) => {
      if (isImport(n)) return true;
      if (inClass) return false;
      const d = unwrap(n);
      return n !== outer && d?.type === 'function_definition';
    });
    const lineStart = text.lastIndexOf('\n', outer.startIndex - 1) + 1;
    return {
      ok: true,
      code: dedentLike(text.slice(lineStart, outer.endIndex)),
      preamble: helpers.map((n) => n.text).join('\n\n'),
      bare: false,
    };
  }
  const tops = root.namedChildren.map(unwrap);
  const defines = tops.filter((n) => n?.type === 'function_definition' || n?.type === 'class_definition').map((n) => n!.childForFieldName('name')?.text ?? '?');
  const returns = root.namedChildren.some((n) => n.type === 'return_statement' || (n.type === 'expression_statement' && n.namedChildren[0]?.type === 'yield'));
  if (defines.length > 0 && !returns) {
    return { ok: false, detail: `the answer defines ${defines.join(', ')} but not ${name}` };
  }
  // A bare body: under the ground truth's decorators and signature.
  let header: string;
  try {
    header = functionParts(target.origFunc).header;
  } catch (err) {
    return { ok: false, detail: `the answer holds no definition of ${name} and the ground truth gives no signature to put a body under: ${(err as Error).message}` };
  }
  return { ok: true, code: `${header}\n${indentLines(text, '    ')}`, preamble: '', bare: true };
}
