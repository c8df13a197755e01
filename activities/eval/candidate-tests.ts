/**
 * Candidate tests for dual ranking, as the model writes them: top-level `assert` statements
 * with setup lines above them (or, despite the prompt, `test_*` functions). Each assertion
 * becomes one self-contained snippet: the setup lines before it, then the assertion. Duplicates
 * (same text up to layout) are dropped, as GenX does before scoring.
 */
import type { SyntaxNode } from '../python-parser';
import { lastCodeBlock } from './candidate';
import { dedentLike, parsePython } from './function-source';
import { EVAL_LIMITS } from './settings';

function isTestFunction(node: SyntaxNode): boolean {
  const def = node.type === 'decorated_definition' ? node.childForFieldName('definition') : node;
  return def?.type === 'function_definition' && /^test/.test(def.childForFieldName('name')?.text ?? '');
}

function definesTarget(node: SyntaxNode, name: string): boolean {
  const def = node.type === 'decorated_definition' ? node.childForFieldName('definition') : node;
  return (def?.type === 'function_definition' || def?.type === 'class_definition') && def.childForFieldName('name')?.text === name;
}

/** Test snippets from one answer (none when it has no code). */
export function splitCandidateTests(answer: string, qualname: string): string[] {
  const code = lastCodeBlock(answer);
  if (code === null) return [];
  const text = dedentLike(code.replace(/\r\n/g, '\n'));
  const name = qualname.split('.')[0]!;
  const setup: string[] = [];
  const tests: string[] = [];
  for (const node of parsePython(text).rootNode.namedChildren) {
    if (node.type === 'comment') continue;
    // A redefinition of the target would test itself instead of the candidate.
    if (definesTarget(node, name)) continue;
    if (node.type === 'assert_statement') tests.push([...setup, node.text].join('\n'));
    else if (isTestFunction(node)) {
      const def = node.type === 'decorated_definition' ? node.childForFieldName('definition')! : node;
      tests.push([...setup, node.text, `${def.childForFieldName('name')!.text}()`].join('\n'));
    } else setup.push(node.text);
  }
  return tests;
}

/** Same test up to whitespace. */
function layoutKey(test: string): string {
  return test.replace(/\s+/g, ' ').trim();
}

/** Tests of several answers, deduplicated, in order, at most `limit`. */
export function mergeCandidateTests(answers: readonly string[][], limit: number = EVAL_LIMITS.maxTestsPerFunction): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const tests of answers) {
    for (const t of tests) {
      const key = layoutKey(t);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(t);
      if (out.length >= limit) return out;
    }
  }
  return out;
}
