/**
 * The test-calls rule on the scripted fixtures: every test-writing answer (tests, debug and
 * coverage steps) of the demo's and the zip-code fixture's scripts, checked under RepoST's literal
 * rule and under the reachable one. These are the refusal counts docs/pipeline.md reports.
 */
import * as path from 'node:path';
import { definitionSource } from '../../../activities/dataset/script-parts';
import { parseCodeAnswer } from '../../../activities/llm';
import { checkTestScript, type TestCallsRule } from '../../../activities/llm/sanity';
import { loadLlmScript } from '../../../scripts/scripted-llm/server';

const FIXTURES = {
  demo: path.resolve(__dirname, '../../../scripts/demo/scripted-llm-responses.json'),
  'zip codes': path.resolve(__dirname, '../../fixtures/scripted-llm/repost-zip-codes.json'),
};

/** Answers refused by a test-calls check, of the test-writing answers of a fixture. */
function refusals(file: string, rule: TestCallsRule): { answers: number; refused: string[] } {
  const script = loadLlmScript(file);
  const refused: string[] = [];
  let answers = 0;
  for (const r of script.rules) {
    if (!['tests', 'debug', 'coverage'].includes(r.kind ?? '') || !r.functionName) continue;
    r.responses.forEach((response, i) => {
      if (typeof response !== 'string') return;
      const parsed = parseCodeAnswer(response.replace(/\{\{functionName\}\}/g, r.functionName!));
      if (!parsed.ok) return;
      answers++;
      const original = definitionSource(parsed.code, r.functionName!) ?? '';
      const report = checkTestScript({ functionName: r.functionName!, originalFunction: original, script: parsed.code, sandboxScript: '', testCalls: rule });
      if (report.failures.some((f) => f.check.startsWith('test_calls_'))) refused.push(`${r.kind} ${r.functionName} #${i + 1}`);
    });
  }
  return { answers, refused };
}

describe('test-calls refusals on the scripted fixtures', () => {
  it('demo: the literal rule refuses the helper-based first tests answer of word_frequencies; the reachable rule refuses none', () => {
    expect(refusals(FIXTURES.demo, 'literal')).toEqual({ answers: 7, refused: ['tests word_frequencies #1'] });
    expect(refusals(FIXTURES.demo, 'reachable')).toEqual({ answers: 7, refused: [] });
  });

  it('zip codes: neither rule refuses an answer', () => {
    expect(refusals(FIXTURES['zip codes'], 'literal')).toEqual({ answers: 3, refused: [] });
    expect(refusals(FIXTURES['zip codes'], 'reachable')).toEqual({ answers: 3, refused: [] });
  });
});
