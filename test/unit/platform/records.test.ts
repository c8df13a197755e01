import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ArtifactStore } from '../../../activities/artifacts/store';
import type { FunctionOutcome, FunctionRef, FunctionStage, RecordInput } from '../../../activities/contracts';
import { finalizeRunFiles, funnelOf, STAGE_ORDER, writeFunctionRecord } from '../../../activities/dataset/records';

function input(outDir: string, id: string, stage: FunctionStage, store: Record<string, string>): RecordInput {
  const fn: FunctionRef = { functionId: id, repoId: 'r', commit: 'c'.repeat(40), snapshotDir: '/x', path: 'a.py', qualname: `f_${id}`, name: `f_${id}` };
  const outcome: FunctionOutcome = { functionId: id, path: 'a.py', qualname: fn.qualname, accepted: stage === 'accepted', stage, reason: 'why', debugRounds: 0, coverageRounds: 0, branchCoverage: 1, tokens: 10 };
  return {
    run: { runId: 'run', outDir },
    fn,
    prepared: { sourceKey: store.source!, contextKey: store.context!, crossFile: false, standalone: true, dependencyCount: 0, localModules: [] },
    outcome,
    scriptKey: store.script!,
    execution: null,
    astEquivalent: true,
    functionality: null,
    testCorrectness: 'yes',
    promptVersions: { sandbox: 'sandbox@1' },
  };
}

describe('dataset records', () => {
  it('funnel: rejections per stage plus accepted add up to the total', () => {
    const stages: FunctionStage[] = ['accepted', 'sandbox', 'coverage', 'accepted', 'test_check'];
    const { reached, rejectedAt } = funnelOf(stages);
    expect(reached.prepare).toBe(5);
    expect(reached.tests).toBe(4);
    expect(reached.accepted).toBe(2);
    const rejected = Object.values(rejectedAt).reduce((a, b) => a + b, 0);
    expect(rejected + reached.accepted!).toBe(stages.length);
    expect(Object.keys(reached)).toEqual([...STAGE_ORDER]);
  });

  it('writing a record again replaces it: no duplicate, no loss', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'records-'));
    const store = new ArtifactStore(path.join(dir, 'artifacts'));
    const keys = { source: await store.put('def f(x):\n    return x\n'), context: await store.put('## a.py\n'), script: await store.put('print(1)\n') };
    await writeFunctionRecord(store, input(dir, 'aaaa', 'accepted', keys));
    await writeFunctionRecord(store, input(dir, 'bbbb', 'tests', keys));
    await writeFunctionRecord(store, input(dir, 'aaaa', 'accepted', keys));
    const summary = await finalizeRunFiles('run', dir);
    expect(summary.functions).toBe(2);
    expect(summary.accepted).toBe(1);
    expect(summary.rejectedAt.tests).toBe(1);
    const lines = fs.readFileSync(path.join(dir, 'dataset.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    const rec = JSON.parse(lines[0]!);
    expect(rec.orig_func).toContain('def f(x)');
    expect(rec.idx).toBe('aaaa');
    // A replay that now rejects the function moves it from the dataset to the rejections.
    await writeFunctionRecord(store, input(dir, 'aaaa', 'coverage', keys));
    const again = await finalizeRunFiles('run', dir);
    expect(again.accepted).toBe(0);
    expect(again.rejected).toBe(2);
  });
});
