import * as fs from 'node:fs';
import * as path from 'node:path';
import { groundTruthRequest, mapConcurrent, parseRecordsJsonl } from '../../../activities/sandbox/repost-records';
import { REPOST_SAMPLE } from '../../support/fixtures';

const FIXTURE = REPOST_SAMPLE;

describe('RepoST records', () => {
  test('the fixture parses: 40 records with ids, functions, scripts and coverage rates', () => {
    const records = parseRecordsJsonl(fs.readFileSync(FIXTURE, 'utf8'));
    expect(records).toHaveLength(40);
    for (const r of records) {
      expect(r.idx).toMatch(/^\d+$/);
      expect(r.eval_script).toContain(`${r.func_name.split('.').at(-1)}_new_implementation`);
      expect(r.coverage_rate).toBe(1);
    }
  });

  test('a bad line names its line number and field', () => {
    expect(() => parseRecordsJsonl('{"func_name": "f", "idx": 1, "orig_func": "def f(): pass", "eval_script": "x"}\n\n{"idx": 2}\n')).toThrow(
      /record on line 3: func_name/,
    );
  });

  test('a line that is not valid JSON is named by its number, blank lines counted', () => {
    const good = '{"func_name": "f", "idx": 1, "orig_func": "def f(): pass", "eval_script": "x"}';
    expect(() => parseRecordsJsonl(`${good}\n\n${good}\n{"func_name": "g", "idx": 2,\n${good}\n`)).toThrow(/^record on line 4: not valid JSON \(/);
    expect(() => parseRecordsJsonl(`${good}\r\n${good.slice(0, 20)}`)).toThrow(/^record on line 2: not valid JSON/);
  });

  test('the ground-truth request measures the original by default, the copy on request', () => {
    const [record] = parseRecordsJsonl(fs.readFileSync(FIXTURE, 'utf8')).filter((r) => r.func_name === 'Angle.zero');
    const original = groundTruthRequest(record!);
    expect(original).toMatchObject({ install: true, coverage: { functionName: 'Angle.zero' } });
    expect(original.script).toContain('def zero_new_implementation(cls)');
    expect(groundTruthRequest(record!, { coverageOf: 'new-implementation', install: false })).toMatchObject({
      install: false,
      coverage: { functionName: 'Angle.zero_new_implementation' },
    });
  });
});

describe('mapConcurrent', () => {
  test('keeps order and never exceeds the concurrency', async () => {
    let running = 0;
    let peak = 0;
    const out = await mapConcurrent([5, 1, 4, 2, 3], 2, async (n) => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, n * 5));
      running -= 1;
      return n * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30]);
    expect(peak).toBe(2);
  });
});
