/**
 * GenX-style test augmentation for building datasets: the model proposes inputs (never
 * outputs), the ground truth is run on them several times in separate processes, and an input
 * is kept only when every run gave the same value (`repr`). The kept inputs become one more
 * test in the evaluation script, comparing the new implementation's values with the recorded
 * ones; the script must still pass with the ground truth before it is used.
 */
import type { SyntaxNode } from '../python-parser';
import { lastCodeBlock } from './candidate';
import { dedentLike, parsePython } from './function-source';
import type { SnippetResult } from './test-runner';

export const MAX_CASES = 20;

/** Input cases of an answer: blocks after `# case` lines, each ending in an expression. */
export function parseInputCases(answer: string): string[] {
  const code = lastCodeBlock(answer);
  if (code === null) return [];
  const cases: string[] = [];
  let current: string[] | null = null;
  const flush = () => {
    if (current) {
      const text = dedentLike(current.join('\n')).trim();
      if (text) cases.push(text);
    }
  };
  for (const line of code.replace(/\r\n/g, '\n').split('\n')) {
    if (/^\s*#\s*case\b/i.test(line)) {
      flush();
      current = [];
    } else if (current) current.push(line);
  }
  flush();
  const seen = new Set<string>();
  return cases
    .filter((c) => {
      const statements = parsePython(c).rootNode.namedChildren.filter((n) => n.type !== 'comment');
      const last = statements[statements.length - 1];
      // tree-sitter calls an assignment an expression statement too; Python does not.
      const expr = last?.type === 'expression_statement' ? last.namedChildren[0] : undefined;
      return expr !== undefined && !last!.hasError && !/assignment$/.test(expr.type);
    })
    .filter((c) => {
      const key = c.replace(/\s+/g, ' ');
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .slice(0, MAX_CASES);
}

export interface KeptCase {
  source: string;
  expected: string;
}

/** Cases whose value came out the same in every run (a case that raised in any run is dropped). */
export function deterministicCases(cases: readonly string[], runs: readonly (readonly SnippetResult[])[]): KeptCase[] {
  if (runs.length < 2) throw new Error('determinism needs at least two runs');
  const kept: KeptCase[] = [];
  cases.forEach((source, i) => {
    const values = runs.map((r) => r[i]);
    const first = values[0];
    if (first?.status !== 'value') return;
    if (values.every((v) => v?.status === 'value' && v.repr === first.repr)) kept.push({ source, expected: first.repr });
  });
  return kept;
}

function isMainGuard(node: SyntaxNode): boolean {
  if (node.type !== 'if_statement') return false;
  const cond = (node.childForFieldName('condition')?.text ?? '').replace(/\s+/g, '').replace(/'/g, '"');
  return cond === '__name__=="__main__"' || cond === '"__main__"==__name__';
}

function isTestCode(node: SyntaxNode): boolean {
  const def = node.type === 'decorated_definition' ? node.childForFieldName('definition') : node;
  if (def?.type === 'function_definition') return /^test/i.test(def.childForFieldName('name')?.text ?? '');
  if (def?.type === 'class_definition') return /^Test/.test(def.childForFieldName('name')?.text ?? '') || /TestCase/.test(def.childForFieldName('superclasses')?.text ?? '');
  return isMainGuard(node);
}

/** The script without its tests and `__main__` block: what the input prompt shows. */
export function scriptWithoutTests(script: string): string {
  const root = parsePython(script).rootNode;
  const drop = root.namedChildren.filter(isTestCode);
  let out = script;
  for (const n of [...drop].reverse()) out = out.slice(0, n.startIndex) + out.slice(n.endIndex);
  return out.replace(/\n{3,}/g, '\n\n').replace(/\s*$/, '\n');
}

export function augmentedTestName(qualname: string): string {
  return `test_${qualname.split('.').pop()!}_augmented`;
}

/** Python string literal (JSON's escapes are all valid in Python). */
const pyString = (s: string) => JSON.stringify(s);

function augmentedTest(qualname: string, cases: readonly KeptCase[]): string {
  const parts = qualname.split('.');
  const name = parts.pop()!;
  const owner = parts.length ? parts.join('.') : '_sys.modules[__name__]';
  const rows = cases.map((c) => `        (${pyString(c.source)}, ${pyString(c.expected)}),`).join('\n');
  return `def ${augmentedTestName(qualname)}():
    # Inputs added by test augmentation: each expected value is the repr of what the original
    # ${name} returned, the same over repeated runs. The new implementation must give the same.
    import ast as _ast
    import sys as _sys
    _owner = ${owner}
    _get = lambda o, n: o.__dict__[n] if isinstance(o, type) else getattr(o, n)
    _original = _get(_owner, ${pyString(name)})
    _cases = [
${rows}
    ]
    setattr(_owner, ${pyString(name)}, _get(_owner, ${pyString(`${name}_new_implementation`)}))
    try:
        for _source, _expected in _cases:
            _tree = _ast.parse(_source)
            _last = _tree.body.pop()
            _namespace = dict(globals())
            exec(compile(_tree, "<augmented case>", "exec"), _namespace)
            _value = eval(compile(_ast.Expression(_last.value), "<augmented case>", "eval"), _namespace)
            assert repr(_value) == _expected, f"{_source!r}: expected {_expected}, got {_value!r}"
    finally:
        setattr(_owner, ${pyString(name)}, _original)
`;
}

/** The script with the augmented test before its `__main__` block, called first in that block. */
export function augmentedScript(script: string, qualname: string, cases: readonly KeptCase[]): string {
  if (cases.length === 0) throw new Error('no cases to add');
  const test = augmentedTest(qualname, cases);
  const call = `${augmentedTestName(qualname)}()`;
  const root = parsePython(script).rootNode;
  const guard = [...root.namedChildren].reverse().find(isMainGuard);
  if (!guard) return `${script.replace(/\s*$/, '')}\n\n\n${test}\n\nif __name__ == "__main__":\n    ${call}\n`;
  const first = guard.childForFieldName('consequence')?.namedChildren[0];
  if (!first) throw new Error('the __main__ block has no statement');
  const lineStart = script.lastIndexOf('\n', first.startIndex - 1) + 1;
  const indent = script.slice(lineStart, first.startIndex);
  const withCall = `${script.slice(0, lineStart)}${indent}${call}\n${script.slice(lineStart)}`;
  const guardLine = script.lastIndexOf('\n', guard.startIndex - 1) + 1;
  return `${withCall.slice(0, guardLine)}${test}\n\n${withCall.slice(guardLine)}`;
}
