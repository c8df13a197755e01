/**
 * The final checks: the sandboxed target's AST against the original's, the LLM functionality
 * check when the trees differ (a record of a split that asks for it, `loops.requireAstMatch`, needs
 * them equal), and the LLM check of the
 * tests' correctness.
 */
import type { Pipeline, Rejection } from './pipeline';
import { PIPELINE_PRIORITY as P } from './priorities';
import { targetNoun } from './target-kinds';

export async function finalChecks(p: Pipeline): Promise<Rejection | null> {
  const { run, fn, state } = p;
  const noun = targetNoun(fn);
  const target = { run, fn, prepared: p.prepared, scriptKey: p.script.key };
  p.enter('ast_check', `comparing the sandboxed ${noun} with the original`);
  const ast = await p.sandbox(P.checks).astCheck(target);
  state.astEquivalent = ast.equivalent;
  if (!ast.equivalent) {
    if (p.thresholds.astCheckRequired) return { stage: 'ast_check', reason: `${p.fn.split === 'eval' ? 'an evaluation' : 'a training'} record needs the original ${noun} unchanged: ${ast.difference ?? 'the trees differ'}` };
    p.enter('functionality_check', `asking whether the sandboxed ${noun} behaves the same`);
    const verdict = await p.llm(P.checks).checkFunctionality(target);
    p.answered(verdict, 'check_functionality');
    if (!verdict.ok) return { stage: 'functionality_check', reason: `${verdict.failure}: ${verdict.detail}` };
    state.functionality = verdict.answer;
    if (verdict.answer === 'no') return { stage: 'functionality_check', reason: `sandboxed ${noun} differs: ${ast.difference ?? ''} ${verdict.reasoning}`.trim() };
  }
  p.enter('test_check', 'asking whether the tests are correct');
  const tests = await p.llm(P.checks).checkTests(target);
  p.answered(tests, 'check_tests');
  if (!tests.ok) return { stage: 'test_check', reason: `${tests.failure}: ${tests.detail}` };
  state.testCorrectness = tests.answer;
  if (tests.answer !== 'yes') return { stage: 'test_check', reason: `tests judged incorrect: ${tests.reasoning}` };
  return null;
}
