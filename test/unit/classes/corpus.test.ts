/**
 * The class corpus's pure parts: records, the summary's distributions, the stratified sample.
 * Writing the files (Parquet needs hyparquet-writer, an ES module) is tested through
 * scripts/classes.ts in test/integration/classes-corpus.test.ts.
 */
import * as path from 'node:path';
import { RepositoryAnalyzer } from '../../../activities/analysis';
import {
  CLASS_COLUMNS,
  CLASS_METRICS,
  ClassRecordSchema,
  MetricsSummary,
  StratifiedSample,
  classRecord,
  classSource,
  distribution,
  quantile,
  type ClassRecord,
} from '../../../activities/classes';
import { parquetSchema } from '../../../activities/export/columns';

const FIXTURE = path.resolve(__dirname, '../../fixtures/classes');
const repo = { repoId: 'acme/shapes', commit: 'c0ffee', license: 'mit', split: 'train' as const };

function record(id: string, level: ClassRecord['documentation_level']): ClassRecord {
  return { id, documentation_level: level } as ClassRecord;
}

describe('class records', () => {
  let records: ClassRecord[];
  beforeAll(async () => {
    const a = await RepositoryAnalyzer.open(FIXTURE);
    records = a.classes().map((c) => classRecord(repo, c, a.repo.modules.get(c.path)!.lines));
  });

  it('carry provenance, source, skeleton, level and every metric, and pass their schema', () => {
    const account = records.find((r) => r.qualname === 'Account')!;
    expect(ClassRecordSchema.parse(account)).toEqual(account);
    expect(account).toMatchObject({ repository_name: 'acme/shapes', commit: 'c0ffee', license: 'mit', split: 'train', file_path: 'shapes/ledger.py', class_name: 'Account', start_line: 4, documentation_level: 'partial' });
    expect(account.id).toMatch(/^[0-9a-f]{16}$/);
    expect(account.human_written_class.split('\n')[0]).toBe('class Account:');
    expect(account.human_written_class.split('\n').at(-1)).toBe('        self.alert(self.owner)');
    expect(account.class_skeleton).toContain('    def deposit(self, amount):\n        """Add money."""\n        pass');
    expect(Object.keys(account.metrics)).toEqual(CLASS_METRICS.map((c) => c.name));
    expect(account.metrics).toMatchObject({ total_lines: 29, lcom4: 2, lcom_star: 0.917, total_program_units: 6, total_doc_str: 5 });
    expect(new Set(records.map((r) => r.id)).size).toBe(records.length);
  });

  it('give a nested class its source without the indentation it has in its parent', () => {
    const lines = ['class A:', '    @dec', '    class B:', '        x = """', 'text at column 0', '        """'];
    expect(classSource(lines, 2, 6)).toBe('@dec\nclass B:\n    x = """\ntext at column 0\n    """');
  });

  it('flatten into Parquet columns: one per field and metric, a typed list for the methods', () => {
    const schema = parquetSchema(CLASS_COLUMNS);
    expect(schema[0]).toEqual({ name: 'root', num_children: CLASS_COLUMNS.length });
    expect(schema.find((e) => e.name === 'lcom_star')).toMatchObject({ type: 'DOUBLE', repetition_type: 'OPTIONAL' });
    expect(schema.find((e) => e.name === 'cyclomatic_total')).toMatchObject({ type: 'INT32', repetition_type: 'REQUIRED' });
    const at = schema.findIndex((e) => e.name === 'method_metrics');
    expect(schema.slice(at + 3, at + 8)).toEqual([
      { name: 'name', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
      { name: 'line', type: 'INT32', repetition_type: 'REQUIRED' },
      { name: 'cyclomatic', type: 'INT32', repetition_type: 'REQUIRED' },
      { name: 'essential', type: 'INT32', repetition_type: 'REQUIRED' },
      { name: 'max_nesting', type: 'INT32', repetition_type: 'REQUIRED' },
    ]);
  });
});

describe('distributions', () => {
  it('quartiles interpolate between order statistics, nulls are counted apart', () => {
    expect(quantile([1, 2, 3, 4], 0.25)).toBe(1.75);
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([7], 0.75)).toBe(7);
    expect(distribution([4, null, 1, 3, 2])).toEqual({ count: 4, nulls: 1, min: 1, p25: 1.75, median: 2.5, p75: 3.25, max: 4, mean: 2.5, std: 1.118 });
    expect(distribution([null])).toEqual({ count: 0, nulls: 1, min: null, p25: null, median: null, p75: null, max: null, mean: null, std: null });
  });

  it('summarise every metric over all classes and per documentation level', async () => {
    const a = await RepositoryAnalyzer.open(FIXTURE);
    const summary = new MetricsSummary();
    for (const c of a.classes()) summary.add(classRecord(repo, c, a.repo.modules.get(c.path)!.lines));
    const r = summary.result();
    expect(r.classes).toBe(10);
    expect(r.methods).toBe(28);
    expect(r.documentation).toEqual({ full: { classes: 2, share: 0.2 }, partial: { classes: 3, share: 0.3 }, none: { classes: 5, share: 0.5 } });
    expect(Object.keys(r.metrics)).toEqual(CLASS_METRICS.map((c) => c.name));
    // Methods per class: Canvas 3, Flow 7, Shape 2, Circle 3, Square 2, Ring 1, Account 5, Counter 4, Empty 0, Unit 1.
    expect(r.metrics.methods).toMatchObject({ group: 'size', count: 10, min: 0, median: 2.5, max: 7, mean: 2.8 });
    // LCOM* is undefined for 5 classes (Shape, Square, Ring, Empty, Unit).
    expect(r.metrics.lcom_star).toMatchObject({ count: 5, nulls: 5 });
    // Shape and Counter are the fully documented ones: 2 and 4 methods.
    expect(r.byLevel.full.methods).toMatchObject({ count: 2, min: 2, max: 4 });
  });
});

describe('stratified sample', () => {
  const all = Array.from({ length: 60 }, (_, i) => record(`${i}`.padStart(16, '0'), (['full', 'partial', 'none'] as const)[i % 3]!));

  it('keeps at most N per level, the same ones whatever the order, others for another seed', () => {
    const take = (records: ClassRecord[], seed: number) => {
      const s = new StratifiedSample(4, seed);
      for (const r of records) s.offer(r);
      return s;
    };
    const a = take(all, 1);
    expect(a.counts()).toEqual({ full: 4, partial: 4, none: 4 });
    const ids = a.records().map((r) => r.id);
    expect(a.records().map((r) => r.documentation_level)).toEqual([...Array(4).fill('full'), ...Array(4).fill('partial'), ...Array(4).fill('none')]);
    expect(take([...all].reverse(), 1).records().map((r) => r.id)).toEqual(ids);
    expect(take(all, 2).records().map((r) => r.id)).not.toEqual(ids);
    // A level with fewer classes than N gives all it has.
    expect(take(all.filter((r) => r.documentation_level !== 'full').concat(all[0]!), 1).counts()).toEqual({ full: 1, partial: 4, none: 4 });
  });
});
