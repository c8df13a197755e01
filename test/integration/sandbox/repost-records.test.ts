/** RepoST fixture records with their ground truth pass, with the coverage the records report. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SandboxExecutor } from '../../../activities/sandbox';
import { mapConcurrent, parseRecordsJsonl, runGroundTruth } from '../../../activities/sandbox/repost-records';
import { makeExecutor } from './sandbox-env';
import { REPOST_SAMPLE } from '../../support/fixtures';

const FIXTURE = REPOST_SAMPLE;
/** A method with a self-referencing annotation, a no-branch function, branchy ones, and a numpy one. */
const PICKED = ['681', '301', '19', '451', '246', '252'];

describe('RepoST records with ground truth', () => {
  let executor: SandboxExecutor;

  beforeAll(async () => {
    executor = await makeExecutor('pool', { memoryMb: 1024, pool: { enabled: true, size: 2, recycleAfterRuns: 50, maxAgeSec: 1800 } });
  });

  afterAll(async () => {
    await executor.close();
  });

  test('picked records pass and match their coverage rate', async () => {
    const records = parseRecordsJsonl(fs.readFileSync(FIXTURE, 'utf8')).filter((r) => PICKED.includes(r.idx));
    expect(records).toHaveLength(PICKED.length);
    const outcomes = await mapConcurrent(records, 2, (r) => runGroundTruth(executor, r));
    for (const o of outcomes) {
      expect({ idx: o.idx, status: o.result.status, stderr: o.result.stderr }).toEqual({ idx: o.idx, status: 'passed', stderr: '' });
      expect({ idx: o.idx, matches: o.coverageMatches }).toEqual({ idx: o.idx, matches: true });
    }
    const numpy = outcomes.find((o) => o.idx === '252')!;
    expect(numpy.result.packages.map((p) => p.name)).toContain('numpy');
  });

  test('a broken implementation fails the record', async () => {
    const record = parseRecordsJsonl(fs.readFileSync(FIXTURE, 'utf8')).find((r) => r.idx === '19')!;
    const broken = { ...record, orig_func: record.orig_func.replace('result.append(word1[i])', 'result.append(word2[i].upper())') };
    const o = await runGroundTruth(executor, broken);
    expect(o.result.status).toBe('failed');
    expect(o.result.exception?.type).toBe('AssertionError');
  });
});
