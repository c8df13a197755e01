import * as fs from 'node:fs';
import { countBpeTokens } from '../../../activities/dataset/bpe-tokens';
import { ProductRecordSchema, type ProductRecord } from '../../../activities/dataset/product-record';
import { lineCount, measureRecord, measureScript } from '../../../activities/dataset/record-measures';
import { REPOST_PAPER_TABLE_4, datasetStatistics } from '../../../activities/dataset/statistics';
import { emptyUsage } from '../../../activities/store/usage';
import { REPOST_SAMPLE } from '../../support/fixtures';

const SCRIPT = `import os
import numpy as np, json
from yaml import safe_load
from . import sibling
import sklearn.metrics
from __future__ import annotations


def clamp(x, lo, hi):
    assert lo <= hi
    return max(lo, min(x, hi))


def clamp_new_implementation(x, lo, hi):
    return max(lo, min(x, hi))


def test_clamp():
    import requests
    for x in range(3):
        assert clamp(x, 0, 1) == clamp_new_implementation(x, 0, 1)
    assert clamp(5, 0, 1) == clamp_new_implementation(5, 0, 1)

    def test_inner():
        assert clamp(-1, 0, 1) == 0

    test_inner()


class TestMore:
    def test_more(self):
        assert clamp(0, 0, 0) == 0


if __name__ == "__main__":
    test_clamp()
    assert True
`;

function record(overrides: Partial<ProductRecord>): ProductRecord {
  return ProductRecordSchema.parse({
    func_name: 'clamp',
    idx: 'id',
    repo_name: 'o/r',
    func_path: 'm.py',
    orig_func: 'def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n',
    orig_context: '',
    eval_script: SCRIPT,
    coverage_rate: 1,
    coverage_report: '',
    sandbox_ast_check: true,
    sandbox_functionality_check: null,
    test_correctness_check: 'yes',
    commit_id: 'c',
    qualname: 'clamp',
    function_id: 'id',
    run_id: 'run',
    standalone: true,
    packages: [],
    prompt_versions: {},
    debug_rounds: 0,
    coverage_rounds: 0,
    llm_tokens: 100,
    ...overrides,
  });
}

describe('record measures', () => {
  it('counts physical lines; a final newline does not start another', () => {
    expect(lineCount('')).toBe(0);
    expect(lineCount('a')).toBe(1);
    expect(lineCount('a\n')).toBe(1);
    expect(lineCount('a\n\nb')).toBe(3);
    expect(lineCount('a\r\nb\r\n')).toBe(2);
  });

  it('counts o200k_base tokens', () => {
    expect(countBpeTokens('')).toBe(0);
    expect(countBpeTokens('hello world')).toBe(2);
    // Special-token look-alikes are plain text, not an error.
    expect(countBpeTokens('<|endoftext|>')).toBeGreaterThan(1);
  });

  it('counts the asserts of test functions only, each assert statement once', () => {
    // test_clamp: two asserts (one in a loop) plus the nested test_inner's one; TestMore.test_more: one.
    // Not counted: the assert inside clamp itself and the one under __main__.
    expect(measureScript(SCRIPT).tests).toBe(4);
  });

  it('lists the external libraries the script imports, as distributions', () => {
    // os, json and __future__ are the standard library; `from . import` is relative; yaml -> PyYAML.
    expect(measureScript(SCRIPT).externalLibraries).toEqual(['numpy', 'pyyaml', 'requests', 'scikit-learn']);
  });

  it('measures a record: target and script length, rounds', () => {
    const m = measureRecord(record({ debug_rounds: 1, coverage_rounds: 2 }));
    expect(m.target.lines).toBe(2);
    expect(m.target.tokens).toBe(countBpeTokens('def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n'));
    expect(m.evalScript.lines).toBe(SCRIPT.split('\n').length - 1);
    expect(m.rounds).toBe(3);
  });
});

describe('dataset statistics (RepoST Table 4)', () => {
  it('averages per split and overall, skips unknown coverage and standalone, and prices an accepted example', async () => {
    const plain = 'def f():\n    return 1\n';
    const records = [
      record({ repo_name: 'a/x', split: 'train', orig_func: plain, coverage_rate: 1, standalone: true, llm_tokens: 100 }),
      record({ repo_name: 'a/x', split: 'train', orig_func: 'def g():\n    pass\n    pass\n    pass\n', coverage_rate: 0.8, standalone: false, llm_tokens: 300 }),
      record({ repo_name: 'b/y', split: 'train', orig_func: plain, coverage_rate: null, standalone: null, llm_tokens: 200, eval_script: 'def test_f():\n    assert 1\n' }),
      record({ repo_name: 'c/z', split: 'eval', orig_func: plain, coverage_rate: 1, standalone: false, llm_tokens: 50 }),
    ];
    const usage = { ...emptyUsage(), calls: 10, promptTokens: 3000, completionTokens: 1000, costUsd: 0.02 };
    // Given as an async iterable, as a run reader yields them.
    async function* stream() {
      yield* records;
    }
    const stats = await datasetStatistics(stream(), usage);

    const train = stats.splits.train!;
    expect(train.repositories).toBe(2);
    expect(train.functions).toBe(3);
    expect(train.avgTargetLines).toBeCloseTo((2 + 4 + 2) / 3, 3);
    expect(train.avgTestsPerScript).toBeCloseTo((4 + 4 + 1) / 3, 3);
    expect(train.avgBranchCoverage).toBeCloseTo(0.9, 3);
    expect(train.standaloneShare).toBeCloseTo(0.5, 3);
    // The short script imports nothing; the others four libraries.
    expect(train.externalLibraries).toBe(4);
    expect(train.avgLlmTokensPerRecord).toBe(200);
    expect(train.avgEvalScriptLines).toBeCloseTo((2 * lineCount(SCRIPT) + 2) / 3, 3);

    const evalSplit = stats.splits.eval!;
    expect(evalSplit).toMatchObject({ repositories: 1, functions: 1, avgBranchCoverage: 1, standaloneShare: 0, avgTargetLines: 2 });

    expect(stats.all.functions).toBe(4);
    expect(stats.all.repositories).toBe(3);
    expect(stats.libraries).toEqual({ numpy: 3, pyyaml: 3, requests: 3, 'scikit-learn': 3 });
    expect(stats.perAcceptedExample).toEqual({ calls: 2.5, tokens: 1000, costUsd: 0.005 });
    expect(stats.tokenizer).toBe('o200k_base');
  });

  it('an empty dataset has no averages, no splits and no price per example', async () => {
    const stats = await datasetStatistics([], { ...emptyUsage(), calls: 3, costUsd: 1 });
    expect(stats.splits).toEqual({});
    expect(stats.all.functions).toBe(0);
    expect(stats.all.avgTargetTokens).toBeNull();
    expect(stats.perAcceptedExample).toBeNull();
  });

  it('a record without a split counts as training data', async () => {
    const { split: _omit, ...legacy } = record({});
    void _omit;
    const stats = await datasetStatistics([legacy], null);
    expect(Object.keys(stats.splits)).toEqual(['train']);
    expect(stats.perAcceptedExample).toBeNull();
  });
});

describe("the measures on RepoST's own records", () => {
  it("land near the paper's REPOST-EVAL figures on 40 of its published records", async () => {
    const records = fs
      .readFileSync(REPOST_SAMPLE, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => ({ ...JSON.parse(l), standalone: null, llm_tokens: 0, debug_rounds: 0, coverage_rounds: 0, split: 'eval' as const }));
    const stats = (await datasetStatistics(records, null)).splits.eval!;
    const paper = REPOST_PAPER_TABLE_4.eval;
    // A sample of 40 of the 296 records: the same definitions give figures within a few percent.
    expect(Math.abs(stats.avgTestsPerScript! - paper.avgTestsPerScript!)).toBeLessThan(1);
    expect(Math.abs(stats.avgEvalScriptLines! / paper.avgEvalScriptLines! - 1)).toBeLessThan(0.1);
    expect(Math.abs(stats.avgTargetTokens! / paper.avgTargetTokens! - 1)).toBeLessThan(0.1);
    expect(Math.abs(stats.avgTargetLines! / paper.avgTargetLines! - 1)).toBeLessThan(0.15);
    expect(Math.abs(stats.avgEvalScriptTokens! / paper.avgEvalScriptTokens! - 1)).toBeLessThan(0.15);
    expect(stats.functions).toBe(40);
  });
});

describe('target lengths beside RepoST', () => {
  it('bins each split of the run, and keeps RepoST published evaluation set and the paper averages beside them', async () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => (i === 0 ? 'def f(x):' : '    x = x + 1')).join('\n') + '\n';
    const rec = (n: number, split: 'train' | 'eval') => ({ repo_name: 'r', orig_func: lines(n), eval_script: '', coverage_rate: 1, standalone: true, llm_tokens: 0, debug_rounds: 0, coverage_rounds: 0, split });
    const stats = await datasetStatistics([rec(3, 'train'), rec(5, 'train'), rec(6, 'train'), rec(25, 'eval'), rec(26, 'eval'), rec(70, 'eval')], null);
    expect(stats.targetLines.bins).toEqual(['1-5', '6-10', '11-15', '16-20', '21-25', '26-30', '31-40', '41-60', '61+']);
    expect(stats.targetLines.splits).toEqual({ eval: [0, 0, 0, 0, 1, 1, 0, 0, 1], train: [2, 1, 0, 0, 0, 0, 0, 0, 0] });
    expect(stats.targetLines.paperAverage).toEqual({ train: 12.8, eval: 9.9 });
    const published = stats.targetLines.repostEval;
    expect(published.bins.reduce((a, b) => a + b, 0)).toBe(published.records);
  });
});
