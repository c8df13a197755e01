/**
 * `tsx scripts/sandbox.ts batch FILE --ground-truth --mutation --stability N --json` as a user runs
 * it, in its own process, on three of RepoST's published records given in RepoST's own form (one
 * JSON list): each record's score, counts and stability verdict, and the distribution.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import { requireEnv } from '../../support/factory';
import { REPOST_SAMPLE } from '../../support/fixtures';
import { SHARED_UV_CACHE } from './sandbox-env';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');

const Output = z.object({
  summary: z.object({
    records: z.number(),
    passed: z.number(),
    mutation: z.object({ records: z.number(), scored: z.number(), mean: z.number(), median: z.number(), made: z.number(), killed: z.number(), survived: z.number(), timedOut: z.number() }).passthrough(),
    stability: z.object({ stable: z.number(), flaky: z.number(), inconclusive: z.number() }),
  }),
  outcomes: z.array(
    z.object({
      idx: z.string(),
      result: z.object({ status: z.string() }).passthrough(),
      mutation: z.object({
        summary: z.object({ status: z.string(), score: z.number().nullable(), made: z.number(), killed: z.number(), survived: z.number(), timedOut: z.number(), notRun: z.number() }).passthrough(),
        survivors: z.array(z.object({ operator: z.string(), line: z.number(), diff: z.string() })),
      }),
      stability: z.object({ verdict: z.string(), reason: z.string().nullable(), runs: z.array(z.object({ hashSeed: z.number(), status: z.string() }).passthrough()) }),
    }).passthrough(),
  ),
});

describe('sandbox.ts batch --mutation --stability', () => {
  test("scores RepoST's published records: each record's score and counts, its stability, the distribution", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-mutation-cli-'));
    try {
      const records = fs.readFileSync(REPOST_SAMPLE, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { idx: string }).filter((r) => ['19', '558', '681'].includes(r.idx));
      const file = path.join(dir, 'checked_test_set.json');
      fs.writeFileSync(file, JSON.stringify(records, null, 1));
      const { stdout } = await run(process.execPath, ['-r', 'tsx/cjs', 'scripts/sandbox.ts', 'batch', file, '--ground-truth', '--mutation', '--mutants', '12', '--stability', '2', '--json'], {
        cwd: ROOT,
        timeout: 600_000,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, REPOST_DATA_DIR: dir, REPOST_SANDBOX_IMAGE: requireEnv('REPOST_TEST_SANDBOX_IMAGE'), REPOST_SANDBOX_PACKAGES_UV_CACHE_DIR: SHARED_UV_CACHE },
      });
      const out = Output.parse(JSON.parse(stdout));
      expect(out.outcomes.map((o) => o.idx)).toEqual(records.map((r) => r.idx)); // the file's order
      for (const o of out.outcomes) {
        expect(o.result.status).toBe('passed');
        const m = o.mutation.summary;
        expect(m.status).toBe('scored');
        expect(m.made).toBeGreaterThan(0);
        expect(m.made).toBeLessThanOrEqual(12);
        expect(m.killed + m.survived + m.notRun).toBe(m.made);
        expect(m.score).toBeCloseTo(m.killed / (m.killed + m.survived));
        expect(o.mutation.survivors).toHaveLength(m.survived);
        for (const s of o.mutation.survivors) expect(s.diff).toMatch(/^--- original\n\+\+\+ mutant\n@@ /);
        expect(o.stability).toMatchObject({ verdict: 'stable', reason: null });
        expect(o.stability.runs.map((r) => r.hashSeed)).toEqual([1, 2]);
      }
      // TodoList.update_task's tests never look at what it prints: some of its mutants survive.
      expect(out.outcomes.find((o) => o.idx === '558')!.mutation.summary.survived).toBeGreaterThan(0);
      const d = out.summary.mutation;
      expect(d).toMatchObject({ records: 3, scored: 3 });
      expect(d.made).toBe(out.outcomes.reduce((n, o) => n + o.mutation.summary.made, 0));
      expect(d.killed).toBe(out.outcomes.reduce((n, o) => n + o.mutation.summary.killed, 0));
      expect(out.summary.stability).toEqual({ stable: 3, flaky: 0, inconclusive: 0 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
