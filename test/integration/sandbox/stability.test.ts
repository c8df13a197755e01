/**
 * Stability runs in real containers: the PYTHONHASHSEED and the clock offset reach the script,
 * a test that depends on set order or on the clock is caught, coverage that moves with the seed
 * is caught, and deterministic records are stable.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { groundTruthRequest, parseRecordsJsonl } from '../../../activities/sandbox/repost-records';
import { checkStability } from '../../../activities/sandbox/stability';
import { DEMO_DATASET, REPOST_SAMPLE } from '../../support/fixtures';
import { warmExecutor } from './sandbox-env';

const lines = (...l: string[]) => `${l.join('\n')}\n`;
const WORDS = "{'alpha', 'beta', 'gamma', 'delta'}";

describe('stability', () => {
  const workerId = `stability-${process.pid}`;
  const sandbox = warmExecutor(workerId);

  test("a run's PYTHONHASHSEED is the script's: the same seed gives the same hashes, another seed others; also for a request too large for the command line", async () => {
    const script = lines('import os, sys', 'print(os.environ.get("PYTHONHASHSEED"), sys.flags.hash_randomization, hash("abc"), list(' + WORDS + '))');
    // The host's Python computes the same string hash for a seed (the set's order may differ between patch releases).
    const hashOf = (seed: number) =>
      spawnSync('python3', ['-c', 'print(hash("abc"))'], { env: { ...process.env, PYTHONHASHSEED: String(seed) }, encoding: 'utf8', timeout: 30_000 }).stdout.trim();
    const five = await sandbox.executor.run({ script, hashSeed: 5 });
    expect(five.stdout).toMatch(new RegExp(`^5 1 ${hashOf(5)} \\[`));
    expect((await sandbox.executor.run({ script, hashSeed: 5 })).stdout).toBe(five.stdout);
    const six = await sandbox.executor.run({ script, hashSeed: 6 });
    expect(six.stdout).toMatch(new RegExp(`^6 1 ${hashOf(6)} \\[`));
    expect(six.stdout.split(' [')[1]).not.toBe(five.stdout.split(' [')[1]);
    // Without a seed the interpreter chooses one (and the script sees no PYTHONHASHSEED).
    expect((await sandbox.executor.run({ script })).stdout).toMatch(/^None 1 /);
    // Over 1 MiB the request travels on stdin, which the supervisor hands to itself again.
    const big = await sandbox.executor.run({ script: `${script}# ${'x'.repeat(1100 * 1024)}\n`, hashSeed: 5, coverage: undefined });
    expect(big).toMatchObject({ status: 'passed', stdout: five.stdout });
  });

  test("a clock offset moves what time and datetime say, and nothing else of the script's types", async () => {
    const script = lines(
      'import datetime, os, pickle, time',
      'made = os.path.getmtime(__file__)',
      'print(round((time.time() - made) / 3600), round((time.time_ns() / 1e9 - made) / 3600))',
      'print(round((datetime.datetime.now() - datetime.datetime.fromtimestamp(made)).total_seconds() / 3600))',
      'print((datetime.date.today() - datetime.date.fromtimestamp(made)).days in (2, 3))',
      'd = datetime.datetime(2020, 1, 2)',
      'print(repr(d), isinstance(d, datetime.date), isinstance(datetime.date(2020, 1, 1), datetime.date), pickle.loads(pickle.dumps(d)) == d)',
      'print(round(time.monotonic() - time.monotonic()))',
    );
    const shifted = await sandbox.executor.run({ script, clockOffsetSec: 2 * 86400 + 3 * 3600 });
    expect(shifted.stdout).toBe(['51 51', '51', 'True', 'datetime.datetime(2020, 1, 2, 0, 0) True True True', '0', ''].join('\n'));
    const unshifted = await sandbox.executor.run({ script, clockOffsetSec: 0 });
    expect(unshifted.stdout.split('\n').slice(0, 2)).toEqual(['0 0', '0']);
  });

  test('a test that depends on set order is flaky, with the differing outcomes as the reason', async () => {
    // Under the plan's seeds (1, 2, 3) the set's first word is beta, delta, gamma.
    const script = lines(`def test_first():`, `    assert next(iter(${WORDS})) != 'delta'`, '', 'test_first()');
    const r = await checkStability(sandbox.executor, { script });
    expect(r.verdict).toBe('flaky');
    expect(r.runs.map((o) => o.status)).toEqual(['passed', 'failed', 'passed']);
    expect(r.reason).toMatch(/^outcomes differ: run 1 \(PYTHONHASHSEED=1, clock \+0s\): passed; run 2 \(PYTHONHASHSEED=2, clock \+1d 1h 1m 1\.5s\): failed \(AssertionError\); run 3 .*: passed$/);
  });

  test('a test that depends on the clock is flaky', async () => {
    // A freshness check against the script's own file time: true now, false a day later.
    const script = lines('import os, time', 'def test_fresh():', '    assert time.time() - os.path.getmtime(__file__) < 3600', '', 'test_fresh()');
    const r = await checkStability(sandbox.executor, { script }, 2);
    expect(r).toMatchObject({ verdict: 'flaky' });
    expect(r.runs.map((o) => [o.status, o.exception])).toEqual([['passed', null], ['failed', 'AssertionError']]);
  });

  test('coverage that moves with the seed is flaky even when every run passes', async () => {
    const script = lines(
      'def pick(words):',
      '    first = next(iter(words))',
      "    if first < 'c':",
      '        return first.upper()',
      '    return first',
      '',
      'def pick_new_implementation(words):',
      '    return pick(words)',
      '',
      `assert pick(${WORDS}) == pick_new_implementation(${WORDS})`,
    );
    const r = await checkStability(sandbox.executor, { script, coverage: { functionName: 'pick' } });
    expect(r.runs.map((o) => o.status)).toEqual(['passed', 'passed', 'passed']);
    expect(r.verdict).toBe('flaky');
    expect(r.reason).toMatch(/^coverage differs: /);
  });

  test("deterministic records are stable: the demo's and some of RepoST's", async () => {
    const records = [
      ...parseRecordsJsonl(fs.readFileSync(DEMO_DATASET, 'utf8')),
      ...parseRecordsJsonl(fs.readFileSync(REPOST_SAMPLE, 'utf8')).filter((r) => ['19', '558', '681'].includes(r.idx)),
    ];
    expect(records.length).toBeGreaterThanOrEqual(5);
    for (const record of records) {
      const r = await checkStability(sandbox.executor, groundTruthRequest(record));
      expect({ idx: record.idx, verdict: r.verdict, reason: r.reason, statuses: r.runs.map((o) => o.status) }).toEqual({
        idx: record.idx,
        verdict: 'stable',
        reason: null,
        statuses: ['passed', 'passed', 'passed'],
      });
      expect(r.runs.every((o) => o.coverageRate !== null)).toBe(true);
    }
  });
});
