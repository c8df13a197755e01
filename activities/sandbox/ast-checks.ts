/**
 * The AST comparisons, computed by the harness inside the sandbox: model output is parsed by the
 * interpreter that will run it, never on the host.
 */
import { HARNESS_TIMEOUT_SEC, type HarnessCalls } from './harness-calls';
import { AstComparisonSchema, AstNormalizationSchema, type AstComparison, type AstNormalization } from './schema';

/** AST equivalence of two function sources. */
export async function astEquivalent(harness: HarnessCalls, a: string, b: string): Promise<AstComparison> {
  return AstComparisonSchema.parse(await harness.json('ast_equiv.py', { a, b }, HARNESS_TIMEOUT_SEC));
}

/** Python's `ast` round trip (parse, unparse) of each source. */
export async function astNormalize(harness: HarnessCalls, sources: string[]): Promise<AstNormalization[]> {
  return AstNormalizationSchema.parse(await harness.json('ast_normalize.py', { sources }, HARNESS_TIMEOUT_SEC)).results;
}
