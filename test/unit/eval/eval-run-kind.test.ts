/**
 * An evaluation run says what it evaluates (`targetKind` in its manifest: functions or classes;
 * an evaluation stored before it was kept evaluated functions), and every reader of runs either
 * reads that kind or refuses the run saying what it is: the function evaluation's files, the class
 * evaluation's files, the crawl readers (report, export, dataset files), replay, and status.
 * Both kinds of evaluation run are created by one helper, which refuses another run's folder.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EvalItem, EvalItemIndex } from '../../../activities/eval/contracts';
import { classEvalPaths, exportClassEvalFiles, exportEvalFiles } from '../../../activities/eval/run-files';
import { parseEvalSettings } from '../../../activities/eval/settings';
import { openRunReader } from '../../../activities/dataset/run-reader';
import { LocalStore } from '../../../activities/store/local';
import { evaluatedKind, RunKindError, runKindLabel } from '../../../activities/store/types';
import { createEvalRun } from '../../../scripts/lib/eval-run';
import { rejectedToReplay } from '../../../scripts/lib/replay';
import { formatRunStatus, runStatus } from '../../../scripts/lib/status';
import { loadConfig } from '../../../temporal.config';

describe('evaluation runs of each kind', () => {
  let root: string;
  let store: LocalStore;
  const config = () => loadConfig({ env: {}, overrides: { dataDir: path.join(root, 'data') } });
  const settings = () => ({ ...parseEvalSettings({ task: 'eval' }), model: 'm' });

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'eval-run-kind-'));
    store = new LocalStore(path.join(root, 'data'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  /** Items in pages, as the launchers store them: ids in the dataset's order. */
  async function items(ids: string[]): Promise<string> {
    const page: EvalItem[] = [];
    for (const id of ids) page.push({ functionId: id, recordKey: await store.putJson({ id }), repo: 'acme/r', qualname: id.toUpperCase() });
    const index: EvalItemIndex = { dataset: { file: 'd.jsonl', format: 'ours', functions: ids.length, splits: { train: 0, eval: ids.length, none: 0 } }, total: ids.length, pages: [await store.putJson(page)] };
    return store.putJson(index);
  }

  /** A class evaluation of classes b and a (in that order), finished with a result for each. */
  async function finishedClassRun(runId: string) {
    const outDir = path.join(root, runId);
    const made = await createEvalRun(store, config(), { runId, targetKind: 'class', settings: settings(), outDir, storeItems: () => items(['b', 'a']), sources: 2 });
    for (const id of ['a', 'b']) await store.putEvalResult(runId, id, { class_name: id.toUpperCase(), samples: [] });
    await store.updateRun(runId, { status: 'finished', summary: { classes: 2, passAtK: { 1: 0 } }, finishedAt: '2026-01-01T00:00:00.000Z' });
    return { ...made, outDir };
  }

  it('keeps what it evaluates; one stored before that was kept evaluated functions', async () => {
    await finishedClassRun('class-run');
    const cls = (await store.getRun('class-run'))!;
    expect(cls).toMatchObject({ kind: 'eval', targetKind: 'class', sources: 2 });
    expect(runKindLabel(cls)).toBe('evaluation of classes');
    // The manifest as an evaluation launcher wrote it before: no targetKind.
    await store.createRun({ runId: 'old-eval', kind: 'eval', createdAt: '2025-01-01T00:00:00.000Z', settingsKey: await store.putJson({}), sourcesKey: null, sources: 1, outDir: null });
    const old = (await store.getRun('old-eval'))!;
    expect(old.targetKind).toBeUndefined();
    expect(evaluatedKind(old)).toBe('function');
    expect(runKindLabel(old)).toBe('evaluation of functions');
  });

  it("writes a class run's files in the dataset's order; the function evaluation's export refuses it, and the class export refuses other runs", async () => {
    const { outDir } = await finishedClassRun('class-run');
    const exported = await exportClassEvalFiles(store, 'class-run', outDir);
    const p = classEvalPaths(outDir);
    expect(exported.files).toEqual([p.lines, p.summary, p.run]);
    expect(fs.readFileSync(p.lines, 'utf8').trim().split('\n').map((l) => JSON.parse(l).class_name)).toEqual(['B', 'A']);
    expect(JSON.parse(fs.readFileSync(p.summary, 'utf8'))).toEqual({ classes: 2, passAtK: { 1: 0 } });
    expect(JSON.parse(fs.readFileSync(p.run, 'utf8'))).toMatchObject({ runId: 'class-run', targetKind: 'class' });

    const refused = exportEvalFiles(store, 'class-run', path.join(root, 'elsewhere'));
    await expect(refused).rejects.toBeInstanceOf(RunKindError);
    await expect(refused).rejects.toThrow(/run class-run is an evaluation of classes, not of functions: its files are class-eval\.jsonl/);
    expect(fs.existsSync(path.join(root, 'elsewhere'))).toBe(false);

    await createEvalRun(store, config(), { runId: 'fn-run', targetKind: 'function', settings: settings(), outDir: path.join(root, 'fn-run'), storeItems: () => items(['x']), sources: 1 });
    expect((await store.getRun('fn-run'))!.targetKind).toBe('function');
    await expect(exportClassEvalFiles(store, 'fn-run', path.join(root, 'fn-out'))).rejects.toThrow(/run fn-run is an evaluation of functions, not of classes: its files are eval\.jsonl/);
    await store.createRun({ runId: 'crawl-run', createdAt: '2026-01-01T00:00:00.000Z', settingsKey: await store.putJson({}), sourcesKey: null, sources: 1, outDir: null });
    await expect(exportClassEvalFiles(store, 'crawl-run', path.join(root, 'c-out'))).rejects.toThrow(/run crawl-run is a crawl run, not an evaluation run/);
  });

  it("is refused by the crawl's readers (report, export, dataset files) and by replay, with what it is", async () => {
    const { outDir } = await finishedClassRun('class-run');
    await expect(openRunReader(store, 'class-run')).rejects.toThrow(`run class-run is an evaluation of classes, not a crawl: the run reader (report.ts, export.ts, a run's dataset files) reads only crawl runs; an evaluation's files are written by eval.ts (this one's to ${outDir})`);
    await expect(rejectedToReplay(store, 'class-run')).rejects.toThrow(/run class-run is an evaluation of classes, not a crawl: replay reads only crawl runs/);
  });

  it('shows in status as an evaluation of its kind, with its items and results', async () => {
    await finishedClassRun('class-run');
    const s = await runStatus(store, 'class-run');
    expect(s.evaluation).toEqual({ evaluates: 'class', items: 2, results: 2 });
    const text = formatRunStatus(s);
    expect(text).toMatch(/^run class-run \(evaluation of classes\): finished/);
    expect(text).toContain('items: 2/2 with a result');
    expect(text).not.toContain('repositories:');
    await store.createRun({ runId: 'crawl-run', createdAt: '2026-01-01T00:00:00.000Z', settingsKey: await store.putJson({}), sourcesKey: null, sources: 1, outDir: null });
    const crawl = await runStatus(store, 'crawl-run');
    expect(crawl.evaluation).toBeUndefined();
    expect(formatRunStatus(crawl)).toMatch(/^run crawl-run \(crawl\): running/);
  });

  it("is created by one helper for both kinds, which refuses a folder holding another run's files before storing anything", async () => {
    await finishedClassRun('first');
    await exportClassEvalFiles(store, 'first', path.join(root, 'first'));
    let stored = 0;
    const again = createEvalRun(store, config(), { runId: 'second', targetKind: 'class', settings: settings(), outDir: path.join(root, 'first'), storeItems: async () => (stored++, items(['c'])), sources: 1 });
    await expect(again).rejects.toThrow(`${path.join(root, 'first')} holds the files of run first: choose another --out`);
    expect(stored).toBe(0);
    expect(await store.getRun('second')).toBeNull();
    // A function evaluation's folder is checked by its own run file the same way.
    fs.mkdirSync(path.join(root, 'fn'), { recursive: true });
    fs.writeFileSync(path.join(root, 'fn', 'eval-run.json'), JSON.stringify({ runId: 'other' }));
    await expect(createEvalRun(store, config(), { runId: 'third', targetKind: 'function', settings: settings(), outDir: path.join(root, 'fn'), storeItems: () => items(['d']), sources: 1 })).rejects.toThrow(/holds the files of run other/);
  });
});
