import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EXPORT_COLUMNS, columnData, huggingFaceFeatures, parquetSchema } from '../../../activities/export/columns';
import { CLASS_ENVIRONMENT_COLUMNS } from '../../../activities/export/class-columns';
import { hubLicenseId, renderDatasetCard, type DatasetCardInput } from '../../../activities/export/dataset-card';
import { EXPORT_MARKER, exportRun } from '../../../activities/export/export-run';
import { toYaml } from '../../../activities/export/yaml';
import type { RunReader } from '../../../activities/dataset/run-reader';
import { ProductRecordSchema, type ProductRecord } from '../../../activities/dataset/product-record';
import { DatasetRecordSchema } from '../../../activities/store/records';
import { StatisticsBuilder } from '../../../activities/dataset/statistics';
import { TestStrengthBuilder } from '../../../activities/dataset/test-strength';

const record: ProductRecord = ProductRecordSchema.parse({
  func_name: 'f',
  idx: 'i1',
  repo_name: 'o/r',
  func_path: 'm.py',
  orig_func: 'def f():\n    return 1\n',
  orig_context: '',
  eval_script: 'def f():\n    return 1\n\ndef test_f():\n    assert f() == f_new_implementation()\n',
  coverage_rate: null,
  coverage_report: '',
  sandbox_ast_check: true,
  sandbox_functionality_check: null,
  test_correctness_check: 'yes',
  commit_id: 'c',
  qualname: 'f',
  function_id: 'i1',
  run_id: 'run-1',
  standalone: true,
  packages: [{ name: 'numpy', version: '2.0.0' }],
  prompt_versions: { tests: 'tests@1', sandbox: 'sandbox@1' },
  debug_rounds: 1,
  coverage_rounds: 0,
  llm_tokens: 1234,
  license: 'MIT',
});

describe('export columns', () => {
  it('keep every RepoST field, in RepoST order, first', () => {
    const repost = Object.keys(DatasetRecordSchema.shape).slice(0, 13);
    expect(EXPORT_COLUMNS.slice(0, 13).map((c) => c.name)).toEqual(repost);
  });

  it('derive one Parquet leaf per scalar and a three-level list per struct list', () => {
    const schema = parquetSchema();
    expect(schema[0]).toEqual({ name: 'root', num_children: EXPORT_COLUMNS.length });
    expect(schema.find((e) => e.name === 'coverage_rate')).toMatchObject({ type: 'DOUBLE', repetition_type: 'OPTIONAL' });
    expect(schema.find((e) => e.name === 'llm_tokens')).toMatchObject({ type: 'INT64', repetition_type: 'REQUIRED' });
    const at = schema.findIndex((e) => e.name === 'packages');
    expect(schema.slice(at, at + 5).map((e) => e.name)).toEqual(['packages', 'list', 'element', 'name', 'version']);
  });

  it('give column data as Parquet wants it and features as datasets spells them', () => {
    const data = Object.fromEntries(columnData([record]).map((c) => [c.name, c.data[0]]));
    expect(data.llm_tokens).toBe(1234n);
    expect(data.license).toBe('mit');
    expect(data.coverage_threshold).toBeNull();
    expect(data.prompt_versions).toEqual([
      { step: 'sandbox', version: 'sandbox@1' },
      { step: 'tests', version: 'tests@1' },
    ]);
    const features = huggingFaceFeatures();
    expect(features.find((f) => f.name === 'packages')).toEqual({
      name: 'packages',
      list: [{ name: 'name', dtype: 'string' }, { name: 'version', dtype: 'string' }, { name: 'as_of', dtype: 'string' }],
    });
    // A version chosen as of a date carries its cutoff; a newest release (or an older record) an empty one.
    expect(data.packages).toEqual([{ name: 'numpy', version: '2.0.0', as_of: '' }]);
    const dated = columnData([{ ...record, packages: [{ name: 'numpy', version: '1.26.4', as_of: '2024-10-06T00:00:00Z' }] }]).find((c) => c.name === 'packages');
    expect(dated?.data[0]).toEqual([{ name: 'numpy', version: '1.26.4', as_of: '2024-10-06T00:00:00Z' }]);
    expect(features.map((f) => f.name)).toEqual(EXPORT_COLUMNS.map((c) => c.name));
  });
});

describe('context_unsupplied column', () => {
  it('is a nullable list in both tables, null for a record written before it was kept, empty when the context supplies all', () => {
    for (const columns of [EXPORT_COLUMNS, CLASS_ENVIRONMENT_COLUMNS]) {
      const schema = parquetSchema(columns as readonly never[]);
      const at = schema.findIndex((e) => e.name === 'context_unsupplied');
      expect(schema.slice(at, at + 4)).toEqual([
        { name: 'context_unsupplied', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', repetition_type: 'REQUIRED', num_children: 1 },
        { name: 'name', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
      ]);
      expect(huggingFaceFeatures(columns as readonly never[]).find((f) => f.name === 'context_unsupplied')).toEqual({ name: 'context_unsupplied', list: [{ name: 'name', dtype: 'string' }] });
    }
    const values = columnData([record, { ...record, context_unsupplied: [] }, { ...record, context_unsupplied: ['app/run.py::deepest', 'getattr(self, name)'] }]).find((c) => c.name === 'context_unsupplied');
    expect(values?.data).toEqual([null, [], [{ name: 'app/run.py::deepest' }, { name: 'getattr(self, name)' }]]);
  });
});

describe('YAML front matter', () => {
  it('writes nested mappings and sequences with JSON scalars', () => {
    expect(toYaml({ a: 'x: y', list: [{ k: 1, n: [true, null] }, 'z'], empty: [], 'odd key': {} })).toBe(
      ['a: "x: y"', 'list:', '  - k: 1', '    n:', '      - true', '      - null', '  - "z"', 'empty: []', '"odd key": {}', ''].join('\n'),
    );
  });
});

describe('dataset card', () => {
  function input(repositories: DatasetCardInput['repositories'], scored: Partial<typeof record>[] = []): DatasetCardInput {
    const builder = new StatisticsBuilder();
    builder.add(record);
    const strength = new TestStrengthBuilder();
    for (const r of scored.length ? scored : [record]) strength.add({ ...record, ...r });
    return {
      runId: 'run-1',
      info: { runId: 'run-1', createdAt: null, sources: [{ kind: 'github' }], settings: { coverageThreshold: 0.8 }, model: 'gpt-4o', promptVersions: {} },
      summary: { runId: 'run-1', repositories: 1, functions: 2, accepted: 1, rejected: 1, funnel: {}, rejectedAt: {}, skippedRepos: [] },
      statistics: builder.result(null),
      testStrength: strength.result(),
      splits: [{ name: 'train', path: 'data/train-00000-of-00001.parquet', rows: 1, coverageThresholds: [0.8], astCheckRequired: [false] }],
      repositories,
      promptVersions: [{ step: 'tests', version: 'tests@1', records: 1 }],
      exportedAt: '2026-01-01T00:00:00.000Z',
    };
  }

  it('field tables name a nullable list as such (context_unsupplied)', () => {
    const card = renderDatasetCard({ ...input([{ repo: 'o/r', license: 'mit', records: 1 }]), classSplits: [{ name: 'train', path: 'data/classes/train-00000-of-00001.parquet', rows: 1, coverageThresholds: [0.8], astCheckRequired: [false] }] });
    expect(card.split('| `context_unsupplied` | list of {name} (nullable) |').length).toBe(3);
  });

  it('maps GitHub license keys to Hub ids', () => {
    expect(hubLicenseId('mit')).toBe('mit');
    expect(hubLicenseId('odbl-1.0')).toBe('odbl');
    expect(hubLicenseId('0bsd')).toBe('other');
    expect(hubLicenseId('unknown')).toBe('unknown');
  });

  it('front matter: one license or a list, configs with the split files, and the features', () => {
    const one = renderDatasetCard(input([{ repo: 'o/r', license: 'mit', records: 1 }]));
    expect(one.startsWith('---\nlicense: "mit"\n')).toBe(true);
    expect(one).toContain('configs:\n  - config_name: "default"\n    data_files:\n      - split: "train"\n        path: "data/train-00000-of-00001.parquet"\n');
    expect(one).toContain('    - name: "packages"\n      list:\n');
    const many = renderDatasetCard(
      input([
        { repo: 'o/r', license: 'mit', licenseSource: 'file:LICENSE', records: 1 },
        { repo: 'p/q', license: 'apache-2.0', licenseSource: 'github-api', records: 3 },
        { repo: 'x/y', license: 'unknown', licenseSource: 'none', records: 1 },
      ]),
    );
    expect(many.startsWith('---\nlicense:\n  - "apache-2.0"\n  - "mit"\n  - "unknown"\n')).toBe(true);
    // Where each license was read is said beside it.
    expect(many).toContain('| o/r | mit | file:LICENSE | 1 |');
    expect(many).toContain('| p/q | apache-2.0 | github-api | 3 |');
    expect(many).toContain('| x/y | unknown | none | 1 |');
  });

  it('class environments: their own configuration, split files, features and section', () => {
    const names = CLASS_ENVIRONMENT_COLUMNS.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    // Where the license was read is a column of the classes as of the functions.
    expect(names).toEqual(expect.arrayContaining(['license', 'license_source']));
    // So are the test-strength figures, read as from a function record.
    expect(names).toEqual(expect.arrayContaining(['mutation_score', 'mutants_made', 'mutants_killed', 'mutants_survived', 'mutants_timed_out', 'mutation_survivors', 'mutation_rounds', 'stability']));
    const strength = Object.fromEntries(CLASS_ENVIRONMENT_COLUMNS.filter((c) => /^(mutation|mutants|stability)/.test(c.name)).map((c) => [c.name, c.value({ mutation_score: 0.75, mutants: { made: 8, killed: 6, survived: 2, timed_out: 1, not_run: 0, left_out: { output: 5, message: 1, equivalent: 0 } }, mutation_rounds: 0, stability: 'stable' } as never)]));
    expect(strength).toEqual({
      mutation_score: 0.75,
      mutants_made: 8,
      mutants_killed: 6,
      mutants_survived: 2,
      mutants_timed_out: 1,
      mutants_left_out_output: 5,
      mutants_left_out_message: 1,
      mutants_left_out_equivalent: 0,
      mutation_survivors: null,
      mutation_rounds: 0,
      stability: 'stable',
    });
    const card = renderDatasetCard({ ...input([{ repo: 'o/r', license: 'mit', records: 2 }]), classSplits: [{ name: 'train', path: 'data/classes/train-00000-of-00001.parquet', rows: 1, coverageThresholds: [0.8], astCheckRequired: [false] }] });
    expect(card).toContain('  - config_name: "classes"\n    data_files:\n      - split: "train"\n        path: "data/classes/train-00000-of-00001.parquet"\n');
    expect(card).toContain('dataset_info:\n  - config_name: "default"\n');
    expect(card).toContain('    - name: "method_coverage"\n');
    expect(card).toContain('## Class environments (configuration `classes`)');
    expect(renderDatasetCard(input([{ repo: 'o/r', license: 'mit', records: 1 }]))).not.toContain('config_name: "classes"');
  });

  it('body: Table 4 figures, thresholds, settings and prompt versions', () => {
    const card = renderDatasetCard(input([{ repo: 'o/r', license: 'mit', records: 1 }]));
    expect(card).toContain('| Test cases (asserts) per script (avg) | 1.0 |');
    expect(card).toContain('| train | 0.8 | no |');
    expect(card).toContain('| coverageThreshold | `0.8` |');
    expect(card).toContain('| tests | `tests@1` | 1 |');
    // The run did not score its tests: the card says so.
    expect(card).toContain('## Test strength\n\nThe run did not measure');
  });

  it('body: nested settings as dotted keys, and the cost of a model without a price as unknown, never $0', () => {
    const base = input([{ repo: 'o/r', license: 'mit', records: 1 }]);
    const usage = { calls: 3, cachedCalls: 0, promptTokens: 30, completionTokens: 3, costUsd: 0, latencyMs: 0 };
    const card = renderDatasetCard({
      ...base,
      info: { ...base.info, settings: { mutation: { enabled: false } }, unpricedModels: ['qwen2.5-coder:7b'] },
      summary: { ...base.summary, llm: { total: usage, byRepo: {}, byStep: {} } },
    });
    expect(card).toContain('| mutation.enabled | `false` |');
    expect(card).toContain('estimated price unknown for qwen2.5-coder:7b');
    expect(card).not.toContain('$0.0000');
  });

  it('body: the mutation scores\' spread and the stability verdicts', () => {
    const mutants = (made: number, killed: number) => ({ made, killed, survived: made - killed, timed_out: 1, not_run: 0 });
    const card = renderDatasetCard(
      input([{ repo: 'o/r', license: 'mit', records: 3 }], [
        { mutation_score: 1, mutants: mutants(10, 10), stability: 'stable' },
        { mutation_score: 0.5, mutants: mutants(8, 4), mutation_rounds: 1, stability: 'stable' },
        { mutation_score: 0.75, mutants: mutants(4, 3), stability: 'flaky' },
      ]),
    );
    expect(card).toContain('| records scored | 3 (0 without a score) |');
    expect(card).toContain('| mean, median | 0.750, 0.750 |');
    expect(card).toContain('| min, max | 0.500, 1.000 |');
    expect(card).toContain('| mutants made, killed, survived, timed out | 22, 17, 5, 3 |');
    expect(card).toContain('| records improved by mutation rounds | 1 (1 rounds) |');
    expect(card).toContain('| stability: stable, flaky (kept), not checked | 2, 1, 0 |');
    expect(card).toContain('| 0.5–0.6 | 1 |');
    expect(card).toContain('| 1.0 | 1 |');
  });
});

describe('the export target', () => {
  /** A reader that must not be read: a refused target is refused before any record is. */
  const untouchable = new Proxy({ runId: 'run-1', location: 'nowhere', outDir: null }, {
    get: (target, key) => (key in target ? target[key as keyof typeof target] : () => { throw new Error(`read ${String(key)}`); }),
  }) as unknown as RunReader;
  /** Every file under a folder with its content (links as their target), to show nothing changed. */
  const snapshot = (dir: string): Record<string, string> =>
    Object.fromEntries(
      (fs.readdirSync(dir, { recursive: true }) as string[]).sort().map((rel) => {
        const abs = path.join(dir, rel);
        const st = fs.lstatSync(abs);
        return [rel, st.isSymbolicLink() ? `-> ${fs.readlinkSync(abs)}` : st.isDirectory() ? '/' : fs.readFileSync(abs, 'utf8')];
      }),
    );

  it('refuses a clone of a dataset repository (README.md, data/ and .git) and leaves it as it was', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-export-clone-'));
    fs.writeFileSync(path.join(dir, 'README.md'), '---\nlicense: mit\n---\nSomeone else\'s dataset.\n');
    fs.mkdirSync(path.join(dir, 'data'));
    fs.writeFileSync(path.join(dir, 'data', 'train-00000-of-00001.parquet'), 'theirs');
    fs.mkdirSync(path.join(dir, '.git', 'objects'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const before = snapshot(dir);
    await expect(exportRun(untouchable, dir)).rejects.toThrow(/is not empty and is not an earlier export \(no \.repost-export\.json; it holds .*\.git.*\); nothing was changed/);
    expect(snapshot(dir)).toEqual(before);
    expect(fs.readdirSync(path.dirname(dir)).filter((n) => n.startsWith(`${path.basename(dir)}.export-`))).toEqual([]);
  });

  it('refuses an earlier export that holds other files, and a marker that is not the exporter\'s own file', async () => {
    const marker = JSON.stringify({ exporter: 'repost-factory', runId: 'run-0' });
    const withExtra = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-export-extra-'));
    fs.writeFileSync(path.join(withExtra, EXPORT_MARKER), marker);
    fs.writeFileSync(path.join(withExtra, 'README.md'), 'card');
    fs.mkdirSync(path.join(withExtra, '.git'));
    const before = snapshot(withExtra);
    await expect(exportRun(untouchable, withExtra)).rejects.toThrow(/earlier export that now holds other files too \(\.git\); nothing was changed/);
    expect(snapshot(withExtra)).toEqual(before);

    // A marker that is a link to a marker elsewhere, or one that names no exporter, proves nothing.
    const elsewhere = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'repost-export-marker-')), EXPORT_MARKER);
    fs.writeFileSync(elsewhere, marker);
    const linked = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-export-linked-'));
    fs.symlinkSync(elsewhere, path.join(linked, EXPORT_MARKER));
    fs.writeFileSync(path.join(linked, 'README.md'), 'card');
    await expect(exportRun(untouchable, linked)).rejects.toThrow(/is not an earlier export/);
    const forged = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-export-forged-'));
    fs.writeFileSync(path.join(forged, EXPORT_MARKER), '{"exporter": "someone"}');
    await expect(exportRun(untouchable, forged)).rejects.toThrow(/is not an earlier export/);
    expect(fs.readFileSync(path.join(forged, EXPORT_MARKER), 'utf8')).toBe('{"exporter": "someone"}');
  });
});
