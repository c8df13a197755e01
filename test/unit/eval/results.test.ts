import * as fs from 'node:fs';
import type { FunctionEvalResult, SampleRound } from '../../../activities/eval/contracts';
import type { Usage } from '../../../activities/store/usage';
import { parseEvalDataset } from '../../../activities/eval/dataset';
import type { SampleOutcome } from '../../../activities/eval/outcome';
import { rankingSummary } from '../../../activities/eval/ranking-summary';
import { renderEvalReport } from '../../../activities/eval/report';
import { evalLineOf, functionEvalSummary, passedPerRound } from '../../../activities/eval/results';
import { parseEvalSettings } from '../../../activities/eval/settings';
import { answerOf, dedupeTargets, sftExamples, trainingMessages, type TrainingTarget } from '../../../activities/eval/sft';
import { splitCounts, splitNote, trainingRefusal } from '../../../activities/eval/splits';
import { summarize } from '../../../activities/eval/summary';
import { DEMO_DATASET } from '../../support/fixtures';

const usage = (promptTokens: number): Usage => ({ calls: 1, cachedCalls: 0, promptTokens, completionTokens: 10, costUsd: 0.001, latencyMs: 0 });
const pass: SampleOutcome = { passed: true, kind: null, exceptionType: null, summary: 'passed' };
const fail = (kind: SampleOutcome['kind'], exceptionType: string | null = null): SampleOutcome => ({ passed: false, kind, exceptionType, summary: `${kind}` });
const round = (r: number, outcome: SampleOutcome, key: string | null = `k${r}`): SampleRound => ({ round: r, candidateKey: key, run: { ...outcome, resultKey: null, durationMs: 3 }, usage: usage(100) });

const [record] = parseEvalDataset(fs.readFileSync(DEMO_DATASET, 'utf8'));
const meta = (file: string, functions: number) => ({ file, format: 'ours' as const, functions, splits: { train: functions, eval: 0, none: 0 } });

/** Four samples: one passes at once, one after one repair, one after two, one never. */
function result(functionId = record!.functionId): FunctionEvalResult {
  return {
    functionId,
    error: null,
    stepErrors: [],
    prompt: { promptKey: 'p', contextKey: 'c', docstring: 'original', hasOriginalDocstring: true, docstringKey: null, promptVersion: '2', usage: { calls: 0, cachedCalls: 0, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyMs: 0 } },
    unusedDocstringUsage: null,
    samples: [
      { sample: 0, rounds: [round(0, pass)], error: null },
      { sample: 1, rounds: [round(0, fail('assertion', 'AssertionError')), round(1, pass)], error: null },
      { sample: 2, rounds: [round(0, fail('no_code'), null), round(1, fail('exception', 'TypeError')), round(2, pass)], error: null },
      { sample: 3, rounds: [round(0, fail('timeout')), round(1, fail('syntax_error', 'SyntaxError')), round(2, fail('exception', 'TypeError'))], error: null },
    ],
    ranking: null,
    rankingUsage: null,
    training: null,
    augmentation: null,
  };
}

const settings = parseEvalSettings({ n: 4, ks: [1, 2, 10], repairRounds: 2, model: 'm' });
const candidates = new Map([['k0', { code: 'def f(): pass', bare: false }], ['k1', { code: 'def f(): return 1', bare: true }], ['k2', { code: 'def f(): return 2', bare: false }]]);

describe('a function result line', () => {
  it('counts samples passed by the end of each round', () => {
    expect(passedPerRound(result().samples, 2)).toEqual([1, 2, 3]);
  });

  it('has Pass@k per round (k above n left out), candidates and usage per step', () => {
    const line = evalLineOf(result(), { record: record!, settings, model: 'm', candidates });
    expect(line.passed_per_round).toEqual([1, 2, 3]);
    expect(line.pass_at_k).toEqual({ 'pass@1': 0.25, 'pass@2': 0.5 });
    expect(line.pass_at_k_per_round.map((r) => r['pass@1'])).toEqual([0.25, 0.5, 0.75]);
    expect(line.samples[2]!.rounds[0]).toMatchObject({ passed: false, kind: 'no_code', candidate: null });
    expect(line.samples[1]!.rounds[1]).toMatchObject({ passed: true, candidate: 'def f(): return 1', bare: true });
    expect(line.usage_by_step.solve!.calls).toBe(4);
    expect(line.usage_by_step.repair!.calls).toBe(5);
    expect(line.usage.promptTokens).toBe(900);
  });
});

describe('a function whose steps failed for good', () => {
  it('leaves a sample without an outcome out of n, keeps the rounds of one that stopped repairing, and lists both', () => {
    const r = result();
    r.samples[3] = { ...r.samples[3]!, rounds: r.samples[3]!.rounds.slice(0, 1), error: 'activity repairCandidate failed: LlmPermanentError: 400' };
    r.samples.push({ sample: 4, rounds: [], error: 'activity sampleCandidate failed: LlmPermanentError: 400' });
    r.stepErrors.push('ranking: activity runTestMatrix failed: boom');
    const line = evalLineOf(r, { record: record!, settings, model: 'm', candidates });
    expect(line.n).toBe(4);
    expect(line.passed_per_round).toEqual([1, 2, 3]);
    expect(line.samples[4]).toEqual({ sample: 4, rounds: [], error: 'activity sampleCandidate failed: LlmPermanentError: 400' });
    expect(line.step_errors).toEqual([
      'sample 3: activity repairCandidate failed: LlmPermanentError: 400',
      'sample 4: activity sampleCandidate failed: LlmPermanentError: 400',
      'ranking: activity runTestMatrix failed: boom',
    ]);
    const s = summarize([line], { runId: 'r', model: 'm', settings, dataset: meta('d.jsonl', 2) });
    expect(s).toMatchObject({ functions: 1, evaluated: 1, errorCount: 0, stepErrorCount: 3, missing: 1 });
    expect(s.stepErrors[0]).toEqual({ functionId: record!.functionId, error: 'sample 3: activity repairCandidate failed: LlmPermanentError: 400' });
  });
});

describe('failures the harness caused', () => {
  it('leave their samples out of n and Pass@k, are counted apart, and a repair round the harness failed keeps the rounds before it', () => {
    const r = result();
    const harness = (summary: string): SampleOutcome => ({ passed: false, kind: 'harness', exceptionType: 'NameError', summary });
    r.samples.push({ sample: 4, rounds: [round(0, harness("the prompt shows cap as available, and the evaluation script does not define it"))], error: null });
    r.samples[3] = { ...r.samples[3]!, rounds: [round(0, fail('timeout')), round(1, harness("the repository's module logic is not part of the evaluation script"))] };
    r.samples[0]!.rounds[0]!.run.dropped = ['from logic.log import LOG: left out LOG (the script defines it)'];
    const line = evalLineOf(r, { record: record!, settings, model: 'm', candidates });
    // Five samples asked, one failed by the harness at once: n is 4, as without it.
    expect(line.n).toBe(4);
    expect(line.harness_failures).toBe(1);
    expect(line.pass_at_k).toEqual({ 'pass@1': 0.25, 'pass@2': 0.5 });
    expect(line.passed_per_round).toEqual([1, 2, 3]);
    expect(line.samples[0]!.rounds[0]!.dropped_imports).toEqual(['from logic.log import LOG: left out LOG (the script defines it)']);
    const s = summarize([line], { runId: 'r', model: 'm', settings, dataset: meta('d.jsonl', 1) });
    expect(s.samples).toBe(4);
    expect(s.harness).toEqual({
      samples: 1,
      repairRounds: 1,
      functions: 1,
      examples: [
        { functionId: record!.functionId, summary: "the repository's module logic is not part of the evaluation script" },
        { functionId: record!.functionId, summary: 'the prompt shows cap as available, and the evaluation script does not define it' },
      ],
      samplesWithDroppedImports: 1,
    });
    expect(s.failureKinds.initial.harness).toBe(1);
    expect(s.failureKinds.final.harness).toBe(2);
    expect(functionEvalSummary(r).samples).toBe(4);
  });
});

/** The ways a candidate in its own process fails a run, none of them in these samples. */
const ISOLATION_KINDS = { candidate_exit: 0, forbidden_value: 0, protocol: 0, wrong_type: 0 };

describe('the run summary', () => {
  it('adds up functions, rounds, repositories and failure kinds; errors are left out of Pass@k', () => {
    const ok = evalLineOf(result(), { record: record!, settings, model: 'm', candidates });
    const other = { ...ok, function_id: 'x2', repo_name: 'other/repo', has_docstring: false, passed_per_round: [4, 4, 4], pass_at_k: { 'pass@1': 1, 'pass@2': 1 } };
    const broken = { ...ok, function_id: 'x3', error: 'activity runCandidate failed: boom', passed_per_round: [0, 0, 0] };
    const s = summarize([ok, other, broken], { runId: 'r', model: 'm', settings, dataset: meta('d.jsonl', 3) });
    expect(s.functions).toBe(3);
    expect(s.evaluated).toBe(2);
    expect(s.errors).toEqual([{ functionId: 'x3', error: 'activity runCandidate failed: boom' }]);
    expect(s.errorCount).toBe(1);
    expect(s.passAtK['pass@1']).toBeCloseTo((0.25 + 1) / 2, 12);
    // k = 10 is above n = 4: not reported.
    expect(Object.keys(s.passAtK)).toEqual(['pass@1', 'pass@2']);
    expect(s.passAtKByRound.map((r) => r['pass@1'])).toEqual([(0.25 + 1) / 2, (0.5 + 1) / 2, (0.75 + 1) / 2]);
    expect(Object.keys(s.byRepository)).toEqual(['other/repo', 'textkit-demo']);
    expect(s.byRepository['textkit-demo']!.finalPassAt1).toBeCloseTo(0.75, 12);
    expect(s.withDocstring).toEqual({ functions: 1, passAtK: { 'pass@1': 0.25, 'pass@2': 0.5 } });
    // Both evaluated lines carry the same samples: first answers fail as assertion, no_code, timeout.
    expect(s.failureKinds.initial).toEqual({ no_code: 2, syntax_error: 0, assertion: 2, exception: 0, timeout: 2, ...ISOLATION_KINDS, harness: 0 });
    expect(s.failureKinds.final).toEqual({ no_code: 0, syntax_error: 0, assertion: 0, exception: 2, timeout: 0, ...ISOLATION_KINDS, harness: 0 });
    expect(s.exceptionTypes.final).toEqual({ TypeError: 2 });
    expect(s.ranking).toBeNull();
    expect(s.usage.total.calls).toBe(27);
  });
});

describe('ranking totals', () => {
  it('average n@k over ranked functions; with random selection only random is reported', () => {
    const ranked = (hidden: boolean[]) => ({
      ...result(),
      ranking: rankingSummary({ rows: hidden.map(() => ''), truthRow: '', hidden, ks: [1, 2], genx: { tolerance: 1e-9, maxIterations: 10 } }),
    });
    const random = parseEvalSettings({ n: 4, ks: [1, 2], select: 'random' });
    const lines = [ranked([true, false, false, false]), ranked([true, true, false, false])].map((r, i) => ({ ...evalLineOf(r, { record: record!, settings: random, model: 'm', candidates }), function_id: `f${i}` }));
    const s = summarize(lines, { runId: 'r', model: 'm', settings: random, dataset: meta('d', 2) });
    expect(Object.keys(s.ranking!.methods)).toEqual(['random']);
    // Random n@1 is pass@1 per function: (1/4 + 2/4) / 2.
    expect(s.ranking!.methods.random!.hitAtK['n@1']).toBeCloseTo(0.375, 12);
    expect(s.ranking!.methods.random!.precisionAtK).toEqual({ 'Pr@1': null });
  });
});

describe('training data', () => {
  const gt: TrainingTarget = { code: 'def f(x):\n    return x + 1', source: 'ground_truth', sample: null, round: null };
  const same: TrainingTarget = { code: 'def f(x):\n    # add one\n    return (x + 1)', source: 'sample', sample: 0, round: 0 };
  const other: TrainingTarget = { code: 'def f(x):\n    return 1 + x', source: 'repair', sample: 1, round: 1 };
  const broken: TrainingTarget = { code: 'def f(x) return', source: 'sample', sample: 2, round: 0 };

  it('drops targets whose normalised form was seen, and those Python cannot parse', () => {
    const norm = [
      { ok: true as const, normalized: 'def f(x):\n    return x + 1' },
      { ok: true as const, normalized: 'def f(x):\n    return x + 1' },
      { ok: true as const, normalized: 'def f(x):\n    return 1 + x' },
      { ok: false as const, error: 'SyntaxError' },
    ];
    expect(dedupeTargets([gt, same, other, broken], norm)).toEqual({ kept: [gt, other], duplicates: 1, unparsable: 1 });
  });

  it('writes chat examples: the prompt without its marker line, the definition as the answer', () => {
    const prompt = [
      { role: 'system' as const, content: '[prompt:solve v1 function:f]\nYou are an expert.' },
      { role: 'user' as const, content: 'Function: f\nImplement it.' },
    ];
    expect(trainingMessages(prompt)[0]!.content).toBe('You are an expert.');
    const laidOut = [
      { role: 'system' as const, content: 'You are an expert.' },
      { role: 'user' as const, content: 'Function: f\nImplement it.\n\n[prompt:solve v2 function:f]' },
    ];
    expect(trainingMessages(laidOut).map((m) => m.content)).toEqual(['You are an expert.', 'Function: f\nImplement it.']);
    const [a, b] = sftExamples([gt, other], { prompt, functionId: 'id', repo: 'r', qualname: 'f', model: 'm' });
    expect(a!.messages[2]).toEqual({ role: 'assistant', content: answerOf(gt.code) });
    expect(a).toMatchObject({ source: 'ground_truth', sample: -1, round: -1, model: 'ground_truth' });
    expect(b).toMatchObject({ source: 'repair', sample: 1, round: 1, model: 'm' });
  });
});

describe('keeping the splits apart', () => {
  it("refuses training data from eval-split records, and notes train-split records evaluated", () => {
    const rec = (split: 'train' | 'eval' | null, qualname = 'f') => ({ split, repo: 'acme/x', qualname });
    expect(splitCounts([rec('train'), rec('eval'), rec(null), rec('train')])).toEqual({ train: 2, eval: 1, none: 1 });
    expect(trainingRefusal([rec('train'), rec(null)])).toBeNull();
    expect(trainingRefusal([rec('train'), rec('eval', 'Interval.merge')])).toBe('1 of 2 record(s) belong to the eval split (e.g. acme/x Interval.merge): training data is never made from them');
    expect(splitNote('eval', { train: 3, eval: 1, none: 0 })).toMatch(/^3 record\(s\) of the train split are evaluated/);
    expect(splitNote('eval', { train: 0, eval: 4, none: 2 })).toBeNull();
  });
});

describe('the report page', () => {
  it('draws one bar per value and escapes what it quotes', () => {
    const ok = evalLineOf(result(), { record: record!, settings, model: 'm', candidates });
    const s = summarize([ok], { runId: 'run-<1>', model: 'm<script>', settings, dataset: meta('d.jsonl', 1) });
    const html = renderEvalReport([s]);
    expect(html).not.toContain('<script');
    expect(html).toContain('m&lt;script&gt;');
    for (const id of ['pass-at-k', 'repair-rounds', 'failure-kinds', 'per-repository']) expect(html).toContain(`data-chart="${id}"`);
    // pass@1 and pass@2 bars for one run; three repair rounds; failure kinds with a nonzero share.
    const bars = (chart: string) => html.slice(html.indexOf(`data-chart="${chart}"`), html.indexOf('</svg>', html.indexOf(`data-chart="${chart}"`))).split('class="bar"').length - 1;
    expect(bars('pass-at-k')).toBe(2);
    expect(bars('repair-rounds')).toBe(3);
    // One bar per kind that is the model's: the five classic ones and the four of an isolated candidate.
    expect(bars('failure-kinds')).toBe(9);
    expect(() => renderEvalReport([])).toThrow(/at least one/);
  });
});
