import { columnData } from '../../../activities/export/columns';
import { renderDatasetCard } from '../../../activities/export/dataset-card';
import { ProductRecordSchema } from '../../../activities/dataset/product-record';
import { SolvabilityFiguresBuilder, solveRateBars } from '../../../activities/dataset/solvability-figures';
import { StatisticsBuilder } from '../../../activities/dataset/statistics';
import type { SolvabilityRecord } from '../../../activities/store/records';
import { datasetRecordOf } from '../../support/records';

const fn = { functionId: 'f1', repoId: 'o/r', commit: 'c', path: 'm.py', qualname: 'f', name: 'f', split: 'eval' as const, license: 'mit' };

function checked(passed: number, samples: number, extra: Partial<SolvabilityRecord> = {}) {
  const solvability: SolvabilityRecord = { model: 'm', samples, passed, passed_initially: passed, docstring: 'original', missing_docstring: 'generate', judged: 0, removed_assertions: [], ...extra };
  return datasetRecordOf(fn, 'r1', { solve_rate: passed / samples, solvability });
}

describe('solvability figures', () => {
  it('count checked records, the solve-rate distribution, removals and written docstrings; unchecked records are not counted', () => {
    const b = new SolvabilityFiguresBuilder();
    b.add(datasetRecordOf(fn, 'r1'));
    b.add({ solve_rate: null, solvability: null });
    b.add(checked(3, 3));
    b.add(checked(1, 3, { passed_initially: 0, judged: 2, removed_assertions: [{ line: 7, text: 'assert a' }, { line: 9, text: 'assert b' }] }));
    b.add(checked(0, 3, { judged: 1, docstring: 'generated' }));
    expect(b.result(2)).toEqual({
      checked: 3,
      meanSolveRate: 0.444,
      solveRates: { '0': 1, '0.33': 1, '1': 1 },
      unsolved: 1,
      unsolvedInitially: 2,
      judged: 3,
      removedAssertions: 2,
      recordsWithRemovals: 1,
      generatedDocstrings: 1,
      rejected: 2,
    });
    // Lowest rate first, though "0" and "1" are integer-like keys of the object.
    expect(solveRateBars(b.result(2))).toEqual([{ rate: 0, records: 1 }, { rate: 0.33, records: 1 }, { rate: 1, records: 1 }]);
    expect(new SolvabilityFiguresBuilder().result(0)).toMatchObject({ checked: 0, meanSolveRate: null, solveRates: {} });
  });

  it('reach the export columns and the dataset card, which says nothing of a stage that did not run', () => {
    const record = ProductRecordSchema.parse({
      ...checked(1, 2, { passed_initially: 0, judged: 1, removed_assertions: [{ line: 7, text: 'assert f(None) == g(None)' }] }),
      generated_docstring: 'What f does.',
      license: 'MIT',
    });
    const data = Object.fromEntries(columnData([record]).map((c) => [c.name, c.data[0]]));
    expect(data).toMatchObject({ solve_rate: 0.5, generated_docstring: 'What f does.', removed_assertions: [{ line: '7', text: 'assert f(None) == g(None)' }] });
    const unchecked = Object.fromEntries(columnData([ProductRecordSchema.parse({ ...datasetRecordOf(fn, 'r1'), license: 'MIT' })]).map((c) => [c.name, c.data[0]]));
    expect(unchecked).toMatchObject({ solve_rate: null, generated_docstring: null, removed_assertions: [] });

    const figures = new SolvabilityFiguresBuilder();
    figures.add(record);
    const statistics = new StatisticsBuilder();
    statistics.add(record);
    const card = (solvability: ReturnType<SolvabilityFiguresBuilder['result']>) =>
      renderDatasetCard({
        runId: 'r1',
        info: { runId: 'r1', createdAt: null, sources: [], settings: {}, model: 'm', promptVersions: {} },
        summary: { runId: 'r1', repositories: 1, functions: 2, accepted: 1, rejected: 1, funnel: {}, rejectedAt: { solvability: 1 }, skippedRepos: [] },
        statistics: statistics.result(null),
        splits: [{ name: 'eval', path: 'data/eval-00000-of-00001.parquet', rows: 1, coverageThresholds: [1], astCheckRequired: [true] }],
        repositories: [{ repo: 'o/r', license: 'mit', records: 1 }],
        promptVersions: [],
        solvability,
        exportedAt: '2026-01-01T00:00:00.000Z',
      });
    const with_ = card(figures.result(1));
    expect(with_).toContain('## Solvability');
    expect(with_).toContain('| mean solve rate | 50.0% |');
    expect(with_).toContain('| records per solve rate | 50.0%: 1 |');
    expect(with_).toContain('| assertions removed as unspecified | 1 (in 1 record(s)) |');
    expect(with_).toContain('| functions rejected at this stage | 1 |');
    expect(card(new SolvabilityFiguresBuilder().result(0))).not.toContain('## Solvability');
  });
});
