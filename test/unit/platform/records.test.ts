import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FunctionOutcome, FunctionRef, FunctionStage, RecordInput } from '../../../activities/contracts';
import { funnelOf, STAGE_ORDER } from '../../../activities/dataset/records';
import { buildStoredRecord } from '../../../activities/targets';
import { exportRunFiles, summarizeRun } from '../../../activities/dataset/run-files';
import { createPythonParser } from '../../../activities/python-parser';
import { LocalStore } from '../../../activities/store/local';
import { RunExistsError } from '../../../activities/store/types';

function fnRef(id: string): FunctionRef {
  return { functionId: id, repoId: 'r', commit: 'c'.repeat(40), path: 'a.py', qualname: `C.f_${id}`, name: `f_${id}`, split: 'train', license: 'mit' };
}

const thresholds = { coverage: 0.8, astCheckRequired: false };

function input(id: string, stage: FunctionStage, keys: Record<string, string>): RecordInput {
  const fn = fnRef(id);
  const outcome: FunctionOutcome = { functionId: id, path: 'a.py', qualname: fn.qualname, accepted: stage === 'accepted', stage, reason: 'why', debugRounds: 0, coverageRounds: 0, branchCoverage: 1, tokens: 10 };
  return {
    run: { runId: 'run', settingsKey: keys.settings!, storeId: 'x' },
    fn,
    thresholds,
    prepared: { sourceKey: keys.source!, contextKey: keys.context!, crossFile: false, standalone: true, dependencyCount: 0, localModules: [] },
    outcome,
    scriptKey: keys.script!,
    execution: null,
    astEquivalent: true,
    functionality: null,
    testCorrectness: 'yes',
    promptVersions: { sandbox: 'sandbox@1' },
  };
}


async function newRun(store: LocalStore, runId: string, candidates: string[]) {
  await store.createRun({ runId, createdAt: 'now', settingsKey: await store.putJson({ settings: 1 }), sourcesKey: null, sources: 1, outDir: null });
  const page = await store.putJson(candidates.map(fnRef));
  await store.putRepoProgress(runId, { index: 0, outcome: { repoId: 'r', source: { kind: 'local', path: '/r' }, skipped: null, candidates: candidates.length, accepted: 0, rejected: 0 }, candidatePages: [page], done: true });
}

describe('dataset records', () => {
  it('funnel: rejections per stage plus accepted add up to the total', () => {
    const stages: FunctionStage[] = ['accepted', 'sandbox', 'coverage', 'accepted', 'test_check', 'internal'];
    const { reached, rejectedAt } = funnelOf(stages);
    expect(reached.prepare).toBe(5);
    expect(reached.tests).toBe(4);
    expect(reached.accepted).toBe(2);
    expect(rejectedAt.internal).toBe(1);
    const rejected = Object.values(rejectedAt).reduce((a, b) => a + b, 0);
    expect(rejected + reached.accepted!).toBe(stages.length);
    expect(Object.keys(reached)).toEqual([...STAGE_ORDER]);
  });

  it('writing a record again replaces it: no duplicate, no loss; records outside the run stay out', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'records-'));
    const store = new LocalStore(dir);
    await newRun(store, 'run', ['aaaa', 'bbbb']);
    const keys = { source: await store.put('def f(x):\n    return x\n'), context: await store.put('## a.py\n'), script: await store.put('print(1)\n'), settings: 'sha256-' + '0'.repeat(64) };
    const put = async (id: string, stage: FunctionStage) => store.putRecord('run', await buildStoredRecord(store, input(id, stage, keys), thresholds));
    await put('aaaa', 'accepted');
    await put('bbbb', 'tests');
    await put('aaaa', 'accepted');
    // A record of a function that is not one of the run's candidates (left by an earlier incarnation).
    await put('zzzz', 'accepted');
    const summary = await summarizeRun(store, 'run');
    expect(summary.functions).toBe(2);
    expect(summary.accepted).toBe(1);
    expect(summary.rejectedAt.tests).toBe(1);
    const out = path.join(dir, 'out');
    await exportRunFiles(store, 'run', out);
    const lines = fs.readFileSync(path.join(out, 'dataset.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    const rec = JSON.parse(lines[0]!);
    expect(rec.orig_func).toContain('def f(x)');
    expect(rec.idx).toBe('aaaa');
    // RepoST writes a method's qualified name as func_name.
    expect(rec.func_name).toBe('C.f_aaaa');
    expect(rec).toMatchObject({ split: 'train', coverage_threshold: 0.8, ast_check_required: false, license: 'mit' });
    // A replay that now rejects the function moves it from the dataset to the rejections.
    await put('aaaa', 'coverage');
    const again = await summarizeRun(store, 'run');
    expect(again.accepted).toBe(0);
    expect(again.rejected).toBe(2);
    // The first summary loads the BPE tokenizer (about a second, more on a busy machine).
  }, 20_000);

  it("writes a method's orig_func as RepoST does: dedented, decorators included, and it parses on its own", async () => {
    const store = new LocalStore(fs.mkdtempSync(path.join(os.tmpdir(), 'records-')));
    // As the analysis cuts it from its class: the class's indentation on every line, and a
    // multi-line string whose continuation lines sit further left than the code.
    const method = [
      '        @staticmethod',
      '        @functools.lru_cache(maxsize=None)',
      '        def decode_token(token: str, *, strict=True) -> dict:',
      '            """Decode a token.',
      '',
      '    Continuation lines of a docstring keep their own indentation.',
      '            """',
      '            text = """first',
      'second at column 0',
      '            third"""',
      '            # a comment',
      '            if strict and not token:',
      '                raise ValueError(text)',
      '            return {"token": token,',
      '      "text": text}',
    ].join('\n');
    const keys = { source: await store.put(method), context: await store.put(''), script: await store.put(''), settings: 'k' };
    const stored = await buildStoredRecord(store, input('mmmm', 'accepted', keys), thresholds);
    if (!stored.accepted || stored.kind === 'class') throw new Error("expected a function's accepted record");
    const orig = stored.record.orig_func;
    expect(orig.split('\n').slice(0, 4)).toEqual(['@staticmethod', '@functools.lru_cache(maxsize=None)', 'def decode_token(token: str, *, strict=True) -> dict:', '    """Decode a token.']);
    // Inside the strings nothing moved; the code around them did.
    expect(orig).toContain('\n    Continuation lines of a docstring keep their own indentation.\n            """\n    text = """first\nsecond at column 0\n            third"""\n');
    expect(orig).toContain('\n    if strict and not token:\n        raise ValueError(text)\n');
    const tree = createPythonParser().parse(orig);
    expect(tree.rootNode.hasError).toBe(false);
    expect(tree.rootNode.namedChildren.map((n) => n.type)).toEqual(['decorated_definition']);
    // A top-level function is left as it is.
    const plain = 'def f(x):\n    return x\n';
    const top = await buildStoredRecord(store, input('ffff', 'accepted', { ...keys, source: await store.put(plain) }), thresholds);
    expect(top.accepted && top.kind !== 'class' && top.record.orig_func).toBe(plain);
  });

  it("a class's record carries its license and where it was read, as a function's does", async () => {
    const store = new LocalStore(fs.mkdtempSync(path.join(os.tmpdir(), 'records-')));
    const keys = { source: await store.put('class A:\n    def f(self):\n        return 1\n'), context: await store.put(''), script: await store.put('def test_A_f():\n    pass\n'), settings: 'k' };
    const base = input('cccc', 'accepted', keys);
    const fn = { ...base.fn, kind: 'class' as const, qualname: 'A', name: 'A', licenseSource: 'file:LICENSE' };
    const stored = await buildStoredRecord(store, { ...base, fn, prepared: { ...base.prepared!, methods: ['f'] } }, thresholds);
    if (!stored.accepted || stored.kind !== 'class') throw new Error("expected a class's accepted record");
    expect(stored.record).toMatchObject({ class_name: 'A', license: 'mit', license_source: 'file:LICENSE', test_functions: ['test_A_f'] });
    const fnStored = await buildStoredRecord(store, { ...base, fn: { ...base.fn, licenseSource: 'file:LICENSE' } }, thresholds);
    expect(fnStored.accepted && fnStored.kind !== 'class' && fnStored.record.license_source).toBe('file:LICENSE');
    // Without a recorded source (an older snapshot), it is null, not made up.
    const older = await buildStoredRecord(store, { ...base, fn: { ...fn, licenseSource: undefined } }, thresholds);
    expect(older.accepted && older.kind === 'class' && older.record.license_source).toBeNull();
  });

  it('pages through thousands of records in bounded pages', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'records-'));
    const store = new LocalStore(dir);
    const ids = Array.from({ length: 1200 }, (_, i) => `f${String(i).padStart(5, '0')}`);
    await newRun(store, 'big', ids);
    const keys = { source: await store.put('def f():\n    return 1\n'), context: await store.put(''), script: await store.put(''), settings: 'k' };
    for (const id of ids) await store.putRecord('big', await buildStoredRecord(store, input(id, id.endsWith('7') ? 'debug' : 'accepted', keys), thresholds));
    const first = await store.listRecords('big', { limit: 500 });
    expect(first.records).toHaveLength(500);
    expect(first.next).toBe('f00499');
    const summary = await summarizeRun(store, 'big');
    expect(summary.functions).toBe(1200);
    expect(summary.rejectedAt.debug).toBe(120);
    const counts = await store.countRecords('big');
    expect(counts).toMatchObject({ total: 1200, accepted: 1080 });
    // The summary measures every accepted record for its Table 4 statistics; the BPE tokenizer
    // alone takes about a second to load, more on a busy machine.
  }, 90_000);

  it('a run id is registered once', async () => {
    const store = new LocalStore(fs.mkdtempSync(path.join(os.tmpdir(), 'records-')));
    await newRun(store, 'once', []);
    await expect(store.createRun({ runId: 'once', createdAt: 'now', settingsKey: 'k', sourcesKey: null, sources: 0, outDir: null })).rejects.toBeInstanceOf(RunExistsError);
  });
});
