/** RepoST fixture records with their ground truth pass, with the coverage the records report. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SandboxExecutor } from '../../../activities/sandbox';
import { mapConcurrent, parseRecordsJsonl, runGroundTruth } from '../../../activities/sandbox/repost-records';
import { freshStore, makeExecutor } from './sandbox-env';
import { REPOST_SAMPLE } from '../../support/fixtures';

const FIXTURE = REPOST_SAMPLE;
describe('RepoST records with ground truth', () => {
  let executor: SandboxExecutor;
  const store = freshStore();

  beforeAll(async () => {
    // An empty store: every environment is made for this test (downloads come from the shared uv cache).
    executor = await makeExecutor('pool', { memoryMb: 1024, pool: { enabled: true, size: 2, recycleAfterRuns: 50, maxAgeSec: 1800 } }, store);
  });

  afterAll(async () => {
    await executor.close();
    fs.rmSync(store, { recursive: true, force: true });
  });

  test('all 40 records pass from an empty package store and match their coverage rate', async () => {
    const records = parseRecordsJsonl(fs.readFileSync(FIXTURE, 'utf8'));
    expect(records).toHaveLength(40);
    const outcomes = await mapConcurrent(records, 2, (r) => runGroundTruth(executor, r));
    for (const o of outcomes) {
      expect({ idx: o.idx, status: o.result.status, issue: o.recordIssue, exception: o.result.exception }).toEqual({ idx: o.idx, status: 'passed', issue: null, exception: null });
    }
    // 226's published coverage (1.0) was measured on another file (its report lists one statement
    // of `execution_test.py`); its tests never reach the two `raise` branches: 0.75 is right.
    expect(outcomes.filter((o) => !o.coverageMatches).map((o) => [o.idx, o.coverageRate])).toEqual([['226', 0.75]]);
    const numpy = outcomes.find((o) => o.idx === '252')!;
    expect(numpy.result.packages.map((p) => p.name)).toContain('numpy');
  });

  test('all 40 records pass with their ground truth run as an evaluation runs a candidate: in a process of its own', async () => {
    const records = parseRecordsJsonl(fs.readFileSync(FIXTURE, 'utf8'));
    const outcomes = await mapConcurrent(records, 2, (r) => runGroundTruth(executor, r, { isolated: true }));
    expect(outcomes.filter((o) => o.result.status !== 'passed').map((o) => ({ idx: o.idx, status: o.result.status, candidate: o.result.candidate, error: o.result.stderr.slice(-300) }))).toEqual([]);
  });

  test('a record whose sandboxed method has another signature than its orig_func is reported as such', async () => {
    const record = parseRecordsJsonl(fs.readFileSync(FIXTURE, 'utf8')).find((r) => r.idx === '558')!;
    expect(record.func_name).toBe('TodoList.update_task');
    // The original takes one more parameter than the script's version, as some published records do.
    const changed = { ...record, orig_func: record.orig_func.replace(/def update_task\(self,/, 'def update_task(self, extra,') };
    expect(changed.orig_func).not.toBe(record.orig_func);
    const o = await runGroundTruth(executor, changed);
    expect(o.result.status).not.toBe('passed');
    expect(o.recordIssue).toMatch(/defines TodoList\.update_task\(self, .*\) but its orig_func is update_task\(self, extra, .*\)/);
  });

  test('a broken implementation fails the record', async () => {
    const record = parseRecordsJsonl(fs.readFileSync(FIXTURE, 'utf8')).find((r) => r.idx === '19')!;
    const broken = { ...record, orig_func: record.orig_func.replace('result.append(word1[i])', 'result.append(word2[i].upper())') };
    const o = await runGroundTruth(executor, broken);
    expect(o.result.status).toBe('failed');
    expect(o.result.exception?.type).toBe('AssertionError');
  });
});
