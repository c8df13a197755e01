/**
 * The status of a finished run read from its folder alone (a folder whose run is not in the
 * store): the same counts as its summary.json, the stages it had off named, nothing in flight, and
 * no Temporal line.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FolderRunReader } from '../../../activities/dataset/run-reader';
import { stagesOff } from '../../../activities/dataset/stages-off';
import { pipelineSettingsFrom, runSettingsFrom } from '../../../activities/run-settings';
import { loadConfig } from '../../../temporal.config';
import { folderRunStatus, formatRunStatus } from '../../../scripts/lib/status';

function runFolder(env: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-folder-status-'));
  const config = loadConfig({ env });
  const usage = (calls: number, cost: number) => ({ calls, cachedCalls: 0, promptTokens: 100 * calls, completionTokens: 10 * calls, costUsd: cost, latencyMs: 0 });
  fs.writeFileSync(
    path.join(dir, 'summary.json'),
    JSON.stringify({
      runId: 'run-f',
      repositories: 2,
      functions: 5,
      accepted: 3,
      rejected: 2,
      funnel: { prepare: 5, accepted: 3 },
      rejectedAt: { sandbox: 0, debug: 2 },
      rounds: { debug: { functions: 2, rounds: 4 }, coverage: { functions: 1, rounds: 1 } },
      skippedRepos: [{ source: { kind: 'github', fullName: 'a/b' }, reason: 'too large' }],
      missingRecords: 0,
      llm: { total: usage(7, 0), byRepo: {}, byStep: {} },
    }),
  );
  fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify({ runId: 'run-f', createdAt: '2026-01-01T00:00:00.000Z', settings: { ...runSettingsFrom(config), pipeline: pipelineSettingsFrom(config) }, sourceList: [] }));
  return dir;
}

describe('the status of a run folder whose run is not in the store', () => {
  it('counts what its summary.json counts, names the stages that were off and leaves Temporal out', async () => {
    const reader = FolderRunReader.open(runFolder({ OPENAI_MODEL: 'qwen2.5-coder:7b' }))!;
    const s = await folderRunStatus(reader);
    expect(s).toMatchObject({
      runId: 'run-f',
      status: 'finished',
      store: { kind: 'folder', location: reader.location },
      repositories: { total: 3, done: 3, skipped: 1 },
      functions: { finished: 5, accepted: 3, rejected: 2, rejectedByStage: { debug: 2 }, inProgressByStage: {}, rounds: { debug: { functions: 2, rounds: 4 } } },
      classes: null,
      llm: { calls: 7 },
      temporal: null,
      unpricedModels: ['qwen2.5-coder:7b'],
      stagesOff: ['stability', 'mutation'],
    });
    const text = formatRunStatus(s);
    expect(text).toContain('functions: 5/5 finished, 3 accepted, 2 rejected');
    expect(text).toContain('stages off in this run (passed unchecked): stability, mutation');
    expect(text).toContain('price unknown for qwen2.5-coder:7b');
    expect(text).not.toContain('$0.0000');
    expect(text).not.toContain('Temporal');
    expect(text).not.toContain('in progress');
  });
});

describe('stagesOff', () => {
  it('names stability, mutation and solvability when the frozen settings switched them off, and nothing it cannot read', () => {
    const on = pipelineSettingsFrom(loadConfig({ env: { REPOST_LOOPS_STABILITY_RUNS: '3', REPOST_LOOPS_MUTATION_ENABLED: 'true' } }));
    expect(stagesOff(on)).toEqual([]);
    const off = pipelineSettingsFrom(loadConfig({ env: {} }));
    expect(stagesOff({ ...off, solvability: { ...off.solvability, enabled: { train: false, eval: false } } })).toEqual(['stability', 'mutation', 'solvability']);
    expect(stagesOff({})).toEqual([]);
    expect(stagesOff(null)).toEqual([]);
    expect(stagesOff({ stability: 'garbled', mutation: { enabled: false } })).toEqual(['mutation']);
  });
});
