/**
 * Scripted LLM answers for evaluation tests (fixtures, not model output): per function, the
 * answers a scripted model gives to a prompt kind, in order.
 */
import type { EvalRecord } from '../../activities/eval/dataset';
import { functionParts, parsePython } from '../../activities/eval/function-source';
import type { ScriptedRule } from '../../scripts/scripted-llm/server';
import type { SyntaxNode } from '../../activities/python-parser';

export function fenced(code: string): string {
  return `Here is the implementation.\n\n\`\`\`python\n${code.replace(/\s+$/, '')}\n\`\`\`\n`;
}

/** The ground truth's signature with `return None` as its whole body. */
export function returnNone(origFunc: string): string {
  return `${functionParts(origFunc).header}\n    return None\n`;
}

/** One rule per record: `answers(record)` in order (the last repeats). */
export function rulesFor(kind: string, records: readonly EvalRecord[], answers: (r: EvalRecord) => string[]): ScriptedRule[] {
  return records.map((r) => ({ kind, functionName: r.qualname, responses: answers(r) }));
}

/**
 * Whether the function gives back a value: a `return <expr>` other than `return None`, or a
 * `yield`, outside nested functions. For one that does not, a test that compares results cannot
 * tell it from `return None`; only its effects can.
 */
export function returnsValue(origFunc: string): boolean {
  const root = parsePython(origFunc.replace(/^\s+/, '')).rootNode;
  const def = root.namedChildren.map((n) => (n.type === 'decorated_definition' ? n.childForFieldName('definition') : n)).find((n) => n?.type === 'function_definition');
  if (!def) throw new Error('no function');
  const walk = (n: SyntaxNode): boolean => {
    if (n !== def && (n.type === 'function_definition' || n.type === 'lambda' || n.type === 'class_definition')) return false;
    if (n.type === 'yield') return true;
    if (n.type === 'return_statement') {
      const value = n.namedChildren[0];
      if (value && value.text !== 'None') return true;
    }
    return n.namedChildren.some(walk);
  };
  return walk(def);
}
