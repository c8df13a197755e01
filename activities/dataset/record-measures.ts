/**
 * What RepoST's Table 4 measures on one accepted record: the length of the target function and
 * of the evaluation script (lines and tokens), the number of test cases, and the external
 * libraries the script imports.
 *
 * - Lines are physical lines of the text (a final newline does not start another line).
 * - Tokens are o200k_base BPE tokens (`bpe-tokens.ts`).
 * - Test cases are `assert` statements, counted in the syntax tree, inside the script's test
 *   functions (every function whose name starts with `test`): RepoST's "# Test Cases", the
 *   asserts its test function must have at least three of. An assert in a loop counts once.
 * - External libraries are the distributions the script imports (`import x`, `from x import y`,
 *   also inside functions), standard-library modules and relative imports excluded, mapped from
 *   import names as the sandbox installs them (`yaml` -> PyYAML) and PEP 503-normalised.
 */
import { importBindings } from '../analysis/bindings';
import { createPythonParser, parseText, type PythonParser, type SyntaxNode } from '../python-parser';
import { distributionForImport, normalizeDistributionName } from '../sandbox/packages';
import { countBpeTokens } from './bpe-tokens';
import type { ProductRecord } from './product-record';

export interface TextMeasure {
  lines: number;
  tokens: number;
}

export interface RecordMeasures {
  target: TextMeasure;
  evalScript: TextMeasure;
  /** assert statements in the script's test functions. */
  tests: number;
  /** Normalised distribution names the script imports, sorted. */
  externalLibraries: string[];
  /** Debug plus coverage rounds the record needed. */
  rounds: number;
}

let parser: PythonParser | null = null;

export function lineCount(text: string): number {
  if (text === '') return 0;
  return text.replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n').length;
}

function measureText(text: string): TextMeasure {
  return { lines: lineCount(text), tokens: countBpeTokens(text) };
}

function functionName(def: SyntaxNode): string {
  return def.childForFieldName('name')?.text ?? '';
}

/** assert statements inside functions named `test*`; a test function nested in another is not counted twice. */
export function countTestAsserts(root: SyntaxNode): number {
  let count = 0;
  const visit = (node: SyntaxNode, inTest: boolean) => {
    if (node.type === 'assert_statement' && inTest) count++;
    const entersTest = !inTest && node.type === 'function_definition' && functionName(node).startsWith('test');
    for (const child of node.namedChildren) visit(child, inTest || entersTest);
  };
  visit(root, false);
  return count;
}

/** Distributions of the absolute, non-standard-library imports anywhere in the script. */
export function importedLibraries(root: SyntaxNode): string[] {
  const names = new Set<string>();
  for (const stmt of root.descendantsOfType(['import_statement', 'import_from_statement'])) {
    const { bindings, star } = importBindings(stmt);
    const modules = bindings.flatMap((b) => (b.kind === 'import' && b.level === 0 ? [b.module] : []));
    if (star && star.level === 0) modules.push(star.module);
    for (const module of modules) {
      const distribution = module ? distributionForImport(module) : null;
      if (distribution) names.add(normalizeDistributionName(distribution));
    }
  }
  return [...names].sort();
}

export function measureScript(script: string): Pick<RecordMeasures, 'evalScript' | 'tests' | 'externalLibraries'> {
  parser ??= createPythonParser();
  const root = parseText(parser, script).rootNode;
  return { evalScript: measureText(script), tests: countTestAsserts(root), externalLibraries: importedLibraries(root) };
}

export function measureRecord(record: Pick<ProductRecord, 'orig_func' | 'eval_script' | 'debug_rounds' | 'coverage_rounds'>): RecordMeasures {
  return { target: measureText(record.orig_func), ...measureScript(record.eval_script), rounds: record.debug_rounds + record.coverage_rounds };
}
