/**
 * scripts/classes.ts as a user runs it: the corpus of a crawl's snapshots (a run in a real local
 * store, its GitHub repository pinned by its candidate list, its local folder by the launcher),
 * and of sources given directly (a local folder, a GitHub repository from the stand-in GitHub
 * server, a list file); the Parquet files loaded with Python's `datasets`; the sample's seed; bad
 * input (a repository id that climbs out of the store, a symlink out of a repository, a missing
 * snapshot) recorded and the rest written; a corpus that fails leaves the earlier one in place.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLASS_COLUMNS, ClassRecordSchema, CORPUS_FILES, type ClassRecord } from '../../activities/classes';
import type { FunctionRef, RepoSource } from '../../activities/contracts';
import { LocalStore } from '../../activities/store';
import { startFakeGitHub, type FakeGitHub } from '../fixtures/github/server';
import { cleanEnv, runScript } from '../support/processes';
import { runPythonWithDatasets } from '../support/tools';

const ROOT = path.resolve(__dirname, '../..');
const SHAPES = path.join(ROOT, 'test/fixtures/classes');
const DEMO = path.join(ROOT, 'scripts/demo/example-repo');

function readRecords(dir: string, file: string = CORPUS_FILES.records): ClassRecord[] {
  const text = fs.readFileSync(path.join(dir, file), 'utf8').trim();
  return text ? text.split('\n').map((l) => ClassRecordSchema.parse(JSON.parse(l))) : [];
}

function readSummary(dir: string) {
  return JSON.parse(fs.readFileSync(path.join(dir, CORPUS_FILES.summary), 'utf8'));
}

describe('the class corpus command', () => {
  let dataDir: string;
  let store: LocalStore;
  let gh: FakeGitHub;
  const env = () => cleanEnv({ REPOST_DATA_DIR: dataDir, REPOST_GITHUB_BASE_URL: gh.baseURL });
  const classes = (args: string[]) => runScript('scripts/classes.ts', args, { env: env(), exactEnv: true, timeoutMs: 120_000 });

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-classes-'));
    store = new LocalStore(dataDir);
    gh = await startFakeGitHub();
    // datalab/mlkit's tarball, as GitHub's codeload serves it (a top folder named after the commit).
    const mlkit = path.join(ROOT, 'test/fixtures/repos/mlkit');
    gh.tarballs.set('datalab/mlkit', execFileSync('tar', ['-czf', '-', '-C', path.dirname(mlkit), '--transform=s,^mlkit,datalab-mlkit-427daf6,', 'mlkit']));
    // A crawl as the store holds it: a GitHub repository (its commit recorded only in its
    // candidate list), a local folder the launcher pinned (its path is gone), one whose snapshot
    // is missing, and one whose repository id would climb out of the snapshot folder.
    await store.saveSnapshot('acme/shapes', 'a1b2c3d4e5f6', SHAPES);
    await store.saveSnapshot('textkit-demo', 'tree-0123abcd', DEMO);
    const sources: RepoSource[] = [
      { kind: 'github', fullName: 'acme/shapes', split: 'eval' },
      { kind: 'local', path: '/gone/textkit', name: 'textkit-demo', pinned: { repoId: 'textkit-demo', commit: 'tree-0123abcd' } },
      { kind: 'github', fullName: 'acme/missing', commit: 'deadbeef' },
      { kind: 'local', path: '/x', pinned: { repoId: '../../outside', commit: 'c0ffee' } },
    ];
    const ref: FunctionRef = { functionId: 'f1', repoId: 'acme/shapes', commit: 'a1b2c3d4e5f6', path: 'shapes/flow.py', qualname: 'Flow.sign', name: 'sign', split: 'eval', license: 'mit' };
    await store.createRun({ runId: 'crawl-1', createdAt: new Date().toISOString(), settingsKey: await store.putJson({}), sourcesKey: await store.putJson(sources), sources: sources.length, outDir: null });
    await store.putRepoProgress('crawl-1', {
      index: 0,
      outcome: { repoId: 'acme/shapes', source: sources[0], skipped: null, candidates: 1, accepted: 0, rejected: 0 },
      candidatePages: [await store.putJson([ref])],
      done: true,
    });
  });
  afterAll(async () => {
    await gh?.close();
    await store?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("reads a run's snapshots: provenance from the run, bad sources recorded, the rest written", async () => {
    const out = path.join(dataDir, 'run-corpus');
    const r = await classes(['crawl-1', '--out', out, '--per-level', '2', '--seed', '7']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const records = readRecords(out);
    const shapes = records.filter((x) => x.repository_name === 'acme/shapes');
    expect(shapes).toHaveLength(10);
    expect(new Set(shapes.map((x) => `${x.commit} ${x.license} ${x.split}`))).toEqual(new Set(['a1b2c3d4e5f6 mit eval']));
    const demo = records.filter((x) => x.repository_name === 'textkit-demo');
    expect(demo.map((x) => [x.qualname, x.commit, x.license, x.split])).toEqual([
      ['Interval', 'tree-0123abcd', null, 'train'],
      ['Tally', 'tree-0123abcd', null, 'train'],
    ]);
    const summary = readSummary(out);
    expect(summary.classes).toBe(12);
    expect(summary.skipped).toEqual([
      { source: 'acme/missing@deadbeef', reason: expect.stringMatching(/^snapshot acme\/missing@deadbeef is not in the store/) },
      { source: '/x', reason: 'not a repository id: "../../outside"' },
    ]);
    expect(r.stdout).toContain('12 classes from 2 repositories, 2 skipped');

    // The Parquet files hold the same rows, every column, loaded by `datasets`.
    const loaded = JSON.parse(
      await runPythonWithDatasets(
        [
          'import json, sys, datasets',
          'ds = datasets.load_dataset("parquet", data_files={"corpus": sys.argv[1], "sample": sys.argv[2]})',
          'print(json.dumps({"columns": ds["corpus"].column_names, "all": ds["corpus"].to_list(), "sample": list(ds["sample"]["id"])}))',
        ].join('\n'),
        [path.join(out, CORPUS_FILES.parquet), path.join(out, CORPUS_FILES.sampleParquet)],
      ),
    ) as { columns: string[]; all: Record<string, unknown>[]; sample: string[] };
    expect(loaded.columns).toEqual(CLASS_COLUMNS.map((c) => c.name));
    expect(loaded.all.map((row) => row.id)).toEqual(records.map((x) => x.id));
    const flow = records.find((x) => x.qualname === 'Flow')!;
    const row = loaded.all.find((x) => x.id === flow.id)!;
    expect({ ...row, metrics: undefined }).toMatchObject({ class_skeleton: flow.class_skeleton, human_written_class: flow.human_written_class, method_metrics: flow.method_metrics, bases: [] });
    for (const [k, v] of Object.entries(flow.metrics)) expect(row[k]).toBe(v);

    // The sample: at most 2 per level, the same for the same seed, another for another seed.
    const sample = readRecords(out, CORPUS_FILES.sampleRecords);
    expect(sample.map((x) => x.id)).toEqual(loaded.sample);
    expect(summary.sample).toEqual({ perLevel: 2, seed: 7, classes: { full: 2, partial: 2, none: 2 } });
    const again = path.join(dataDir, 'run-corpus-again');
    expect((await classes(['crawl-1', '--out', again, '--per-level', '2', '--seed', '7'])).code).toBe(0);
    expect(readRecords(again, CORPUS_FILES.sampleRecords).map((x) => x.id)).toEqual(sample.map((x) => x.id));
    const other = path.join(dataDir, 'run-corpus-other');
    expect((await classes(['crawl-1', '--out', other, '--per-level', '2', '--seed', '8'])).code).toBe(0);
    expect(readRecords(other, CORPUS_FILES.sampleRecords).map((x) => x.id)).not.toEqual(sample.map((x) => x.id));
  });

  it('reads sources as start.ts takes them: folders, owner/name@sha from GitHub, a list file', async () => {
    // A repository with a file linking out of it: the analysis refuses the link, the rest is read.
    const linked = path.join(dataDir, 'linked');
    fs.mkdirSync(linked);
    fs.writeFileSync(path.join(linked, 'ok.py'), 'class Fine:\n    """Docs."""\n');
    fs.symlinkSync('/etc/hostname', path.join(linked, 'leak.py'));
    const list = path.join(dataDir, 'repos.txt');
    fs.writeFileSync(list, `# one a line\n${linked}\ndatalab/mlkit@427daf62a46c9c3cbe52b6dcffa5a13ada49f75b\nghost/no-tarball\n`);
    const out = path.join(dataDir, 'sources-corpus');
    const r = await classes([SHAPES, '--repos', list, '--out', out]);
    expect(r.code).toBe(0);
    const summary = readSummary(out);
    expect(summary.repositories.map((x: { repository: string; license: string | null; classes: number; skippedFiles: number }) => [x.repository, x.license, x.classes, x.skippedFiles])).toEqual([
      ['classes', null, 10, 0],
      ['linked', null, 1, 1],
      ['datalab/mlkit', 'mit', 5, 0],
    ]);
    expect(summary.skipped).toEqual([{ source: 'ghost/no-tarball', reason: expect.stringMatching(/^fetch: /) }]);
    const mlkit = readRecords(out).filter((x) => x.repository_name === 'datalab/mlkit');
    expect(new Set(mlkit.map((x) => x.commit))).toEqual(new Set(['427daf62a46c9c3cbe52b6dcffa5a13ada49f75b']));
    expect(readRecords(out).some((x) => x.human_written_class.includes(fs.readFileSync('/etc/hostname', 'utf8').trim()))).toBe(false);
    // Without --per-level, no sample files.
    expect(fs.existsSync(path.join(out, CORPUS_FILES.sampleRecords))).toBe(false);
  });

  it('bad input: an unknown argument is a usage error; a corpus that fails leaves the earlier one whole', async () => {
    const bad = await classes(['no/such/folder/here']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/neither a run .* nor a folder, nor owner\/name/);

    const out = path.join(dataDir, 'kept');
    expect((await classes([SHAPES, '--out', out])).code).toBe(0);
    const before = fs.readFileSync(path.join(out, CORPUS_FILES.records), 'utf8');
    // A run whose candidate list is missing from the store: the store is damaged, the command fails.
    await store.createRun({ runId: 'crawl-broken', createdAt: new Date().toISOString(), settingsKey: await store.putJson({}), sourcesKey: await store.putJson([{ kind: 'github', fullName: 'acme/shapes' }]), sources: 1, outDir: null });
    await store.putRepoProgress('crawl-broken', { index: 0, outcome: { repoId: 'acme/shapes', source: { kind: 'github', fullName: 'acme/shapes' }, skipped: null, candidates: 1, accepted: 0, rejected: 0 }, candidatePages: ['0'.repeat(64)], done: false });
    const failed = await classes(['crawl-broken', '--out', out]);
    expect(failed.code).toBe(1);
    expect(fs.readFileSync(path.join(out, CORPUS_FILES.records), 'utf8')).toBe(before);
    expect(fs.readdirSync(out).sort()).toEqual([CORPUS_FILES.records, CORPUS_FILES.parquet, CORPUS_FILES.summary].sort());
  });
});
