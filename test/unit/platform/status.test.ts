/**
 * The run status snapshot of a run in flight, read from a store: repositories listed and done,
 * finished functions by stage, unfinished ones by their last LLM step, and the usage so far.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FunctionRef } from '../../../activities/contracts';
import type { ExchangeIndexEntry } from '../../../activities/store/exchanges';
import { LocalStore } from '../../../activities/store/local';
import { ClassDatasetRecordSchema } from '../../../activities/store/records';
import type { StoredRecord } from '../../../activities/store/types';
import { formatProgressLine, formatRunStatus, perAcceptedRecord, ProgressTracker, runStatus, RunNotFoundError, type RunStatus } from '../../../scripts/lib/status';
import { datasetRecordOf } from '../../support/records';
import { runSettingsFrom } from '../../../activities/run-settings';
import { summarizeRun } from '../../../activities/dataset/run-files';
import { loadConfig } from '../../../temporal.config';

function fnRef(id: string): FunctionRef {
  return { functionId: id, repoId: 'acme/r', commit: 'c'.repeat(40), path: 'a.py', qualname: `f_${id}`, name: `f_${id}`, split: 'train', license: null };
}

function rejected(id: string, stage: string, debugRounds = 0): StoredRecord {
  const fn = fnRef(id);
  return { accepted: false, fn, rejection: { function_id: id, repo_name: fn.repoId, func_path: fn.path, qualname: fn.qualname, split: 'train', stage, reason: 'r', debug_rounds: debugRounds, coverage_rounds: 0, llm_tokens: 0 } };
}

function exchange(functionId: string, step: string, tokens: number, cached = false, refusedBy?: string[]): ExchangeIndexEntry {
  return {
    exchangeKey: `sha256-${String(tokens).padStart(64, '0')}`,
    step,
    model: 'm',
    cached,
    promptTokens: tokens,
    completionTokens: 1,
    costUsd: 0.5,
    latencyMs: 1,
    functionId,
    runId: 'run-s',
    ...(refusedBy ? { refusedBy } : {}),
    recordedAt: '2026-01-01T00:00:00.000Z',
  };
}

describe('runStatus', () => {
  it('counts a run in flight from the store', async () => {
    const store = new LocalStore(fs.mkdtempSync(path.join(os.tmpdir(), 'repost-status-')));
    await store.createRun({ runId: 'run-s', createdAt: '2026-01-01T00:00:00.000Z', settingsKey: await store.putJson({}), sourcesKey: null, sources: 3, outDir: null });
    const page = await store.putJson(['f1', 'f2', 'f3', 'f4', 'f5'].map(fnRef));
    const outcome = { repoId: 'acme/r', source: { kind: 'github', fullName: 'acme/r' }, candidates: 5, accepted: 0, rejected: 0 } as const;
    await store.putRepoProgress('run-s', { index: 0, outcome: { ...outcome, skipped: null }, candidatePages: [page], done: false });
    await store.putRepoProgress('run-s', { index: 1, outcome: { ...outcome, repoId: null, skipped: 'too large', candidates: 0 }, candidatePages: [], done: true });
    // f1 rejected after three debug rounds; f2 accepted; f3 asked for tests last; f4 is in a debug round; f5 has not reached the LLM.
    await store.putRecord('run-s', rejected('f1', 'debug', 3));
    const accepted = rejected('f2', 'x');
    await store.putRecord('run-s', { accepted: true, fn: accepted.fn, record: datasetRecordOf(accepted.fn, 'run-s', { orig_func: '', eval_script: '', commit_id: 'c', llm_tokens: 3, debug_rounds: 1, coverage_rounds: 2 }) });
    // f3's tests answer was refused (it reached the new implementation only through a helper); f4's passed.
    for (const e of [
      exchange('f1', 'sandbox', 10, false, []),
      exchange('f3', 'aggregate', 20, false, []),
      exchange('f3', 'tests', 30, false, ['test_calls_target', 'test_calls_new_implementation']),
      exchange('f4', 'tests', 40, false, []),
      exchange('f4', 'debug', 50),
      exchange('f4', 'debug', 60, true),
    ])
      await store.appendExchange(e);

    const s = await runStatus(store, 'run-s');
    expect(s).toMatchObject({
      runId: 'run-s',
      status: 'running',
      finishedAt: null,
      store: { kind: 'local' },
      repositories: { total: 3, listed: 2, done: 1, skipped: 1 },
      functions: {
        candidates: 5,
        finished: 2,
        accepted: 1,
        rejected: 1,
        rejectedByStage: { debug: 1 },
        inProgressByStage: { tests: 1, debug: 1, prepare: 1 },
        rounds: { debug: { functions: 2, rounds: 4 }, coverage: { functions: 1, rounds: 2 } },
      },
      llm: { calls: 6, cachedCalls: 1, promptTokens: 210, completionTokens: 6, costUsd: 3 },
      refused: { calls: 1, reviewed: 4, promptTokens: 30, completionTokens: 1, costUsd: 0.5, byCheck: { test_calls_target: { calls: 1 }, test_calls_new_implementation: { calls: 1 } } },
      temporal: null,
    });
    const text = formatRunStatus(s);
    expect(text).toContain('refused answers: 1 of 4 reviewed, 31 tokens, estimated $0.5000 (by check: test_calls_new_implementation: 1 (31 tokens, $0.5000), test_calls_target: 1 (31 tokens, $0.5000))');
    expect(text).toContain('repositories: 1/3 done (2 listed, 1 skipped)');
    expect(text).toContain('functions: 2/5 finished, 1 accepted, 1 rejected');
    // A run that makes no class environments has no classes figures.
    expect(s.classes).toBeNull();
    // Settings without models: nothing is unpriced, so the estimate is in dollars.
    expect(s.unpricedModels).toEqual([]);
    expect(text).toContain('completion tokens, estimated $3.0000');
    expect(text).not.toContain('classes:');
    expect(text).toContain('in progress by stage: tests: 1, debug: 1, prepare: 1');
    expect(text).toContain('rounds that ran: debug 2 function(s), 4 round(s); coverage 1 function(s), 2 round(s)');
    await expect(runStatus(store, 'run-none')).rejects.toBeInstanceOf(RunNotFoundError);
  });
});

describe('runStatus of a run that makes class environments', () => {
  it('counts classes apart from functions, in the status and the live line', async () => {
    const store = new LocalStore(fs.mkdtempSync(path.join(os.tmpdir(), 'repost-status-')));
    await store.createRun({ runId: 'run-c', createdAt: '2026-01-01T00:00:00.000Z', settingsKey: await store.putJson({}), sourcesKey: null, sources: 1, outDir: null });
    const classRef = (id: string): FunctionRef => ({ ...fnRef(id), qualname: `K_${id}`, name: `K_${id}`, kind: 'class' });
    const page = await store.putJson([...['f1', 'f2', 'f3', 'f4'].map(fnRef), classRef('k1'), classRef('k2')]);
    const outcome = { repoId: 'acme/r', source: { kind: 'github' as const, fullName: 'acme/r' }, skipped: null, candidates: 6, accepted: 0, rejected: 0 };
    await store.putRepoProgress('run-c', { index: 0, outcome, candidatePages: [page], classSelection: { found: 3, droppedBy: { test_class: 1 }, kept: 2, sampled: 2 }, done: false });
    // Functions: f1 accepted, f2 rejected. Classes: k1 accepted, k2 rejected.
    const f2 = rejected('f2', 'debug', 1);
    await store.putRecord('run-c', f2);
    const f1 = rejected('f1', 'x');
    await store.putRecord('run-c', { accepted: true, fn: f1.fn, record: datasetRecordOf(f1.fn, 'run-c', { orig_func: '', eval_script: '', commit_id: 'c', llm_tokens: 3 }) });
    const k2 = rejected('k2', 'tests', 2);
    await store.putRecord('run-c', { ...k2, kind: 'class', fn: classRef('k2') } as StoredRecord);
    const k1 = classRef('k1');
    await store.putRecord('run-c', {
      kind: 'class',
      accepted: true,
      fn: k1,
      record: ClassDatasetRecordSchema.parse({
        class_name: k1.qualname, idx: 'k1', repo_name: k1.repoId, class_path: k1.path, orig_class: '', orig_context: '', eval_script: '', test_functions: [], coverage_rate: 1, coverage_report: '',
        method_coverage: [], sandbox_ast_check: true, sandbox_functionality_check: null, test_correctness_check: 'yes', commit_id: k1.commit, qualname: k1.qualname, class_id: 'k1', run_id: 'run-c',
        split: 'train', coverage_threshold: 0.8, ast_check_required: false, license: null, standalone: true, packages: [], prompt_versions: {}, debug_rounds: 0, coverage_rounds: 0, llm_tokens: 1,
        methods: [], class_skeleton: '', documentation_level: 'none', metrics: {}, method_metrics: [],
      }),
    } as StoredRecord);

    const s = await runStatus(store, 'run-c');
    // The class's rejection and its rounds are the classes', as summary.json counts them.
    expect(s.functions).toMatchObject({ candidates: 4, finished: 2, accepted: 1, rejected: 1, rejectedByStage: { debug: 1 }, rounds: { debug: { functions: 1, rounds: 1 }, coverage: { functions: 0, rounds: 0 } } });
    expect(s.classes).toEqual({ candidates: 2, finished: 2, accepted: 1, rejected: 1, rejectedByStage: { tests: 1 } });
    const summary = await summarizeRun(store, 'run-c');
    expect({ functions: summary.functions, accepted: summary.accepted, rejected: summary.rejected, rounds: summary.rounds }).toEqual({
      functions: s.functions.finished,
      accepted: s.functions.accepted,
      rejected: s.functions.rejected,
      rounds: s.functions.rounds,
    });
    expect(Object.fromEntries(Object.entries(summary.rejectedAt).filter(([, n]) => n))).toEqual(s.functions.rejectedByStage);
    expect(Object.fromEntries(Object.entries(summary.classes!.rejectedAt).filter(([, n]) => n))).toEqual(s.classes!.rejectedByStage);
    const text = formatRunStatus(s);
    expect(text).toContain('functions: 2/4 finished, 1 accepted, 1 rejected');
    expect(text).toContain('classes: 2/2 finished, 1 accepted, 1 rejected');
    expect(text).toContain('rounds that ran: debug 1 function(s), 1 round(s); coverage 0 function(s), 0 round(s)');
    const sample = new ProgressTracker(store, 'run-c', null, () => Date.parse('2026-01-01T00:01:00.000Z')).add(s);
    expect(sample).toMatchObject({ expectedFunctions: 4, expectedClasses: 2 });
    expect(formatProgressLine(sample)).toMatch(/^repos 0\/1 \| functions 2\/4, classes 2\/2 \(running: prepare 2\) \| accepted 2, rejected 2 \|/);
  });
});

describe('ProgressTracker', () => {
  it('estimates the time left from the recent finishing rate, counting repositories not listed yet', async () => {
    let now = Date.parse('2026-01-01T00:10:00.000Z');
    const tracker = new ProgressTracker(new LocalStore(fs.mkdtempSync(path.join(os.tmpdir(), 'repost-progress-'))), 'r', null, () => now);
    const status = (finished: number, listed: number): RunStatus => ({
      runId: 'r',
      kind: 'crawl',
      status: 'running',
      createdAt: '2026-01-01T00:00:00.000Z',
      finishedAt: null,
      store: { kind: 'local', location: '/x' },
      repositories: { total: 4, listed, done: listed - 1, skipped: 0 },
      functions: {
        candidates: listed * 50,
        finished,
        accepted: finished - 1,
        rejected: 1,
        rejectedByStage: { debug: 1 },
        inProgressByStage: { tests: 3, test_check: 1 },
        rounds: { debug: { functions: 7, rounds: 9 }, coverage: { functions: 4, rounds: 5 } },
      },
      llm: { calls: 1200, cachedCalls: 0, promptTokens: 2_000_000, completionTokens: 500_000, costUsd: 12.5, latencyMs: 0 },
      refused: {
        calls: 30,
        cachedCalls: 0,
        reviewed: 500,
        promptTokens: 90_000,
        completionTokens: 30_000,
        costUsd: 0.75,
        latencyMs: 0,
        byCheck: {
          test_calls_target: { calls: 19, cachedCalls: 0, promptTokens: 57_000, completionTokens: 19_000, costUsd: 0.5, latencyMs: 0 },
          parse_truncated: { calls: 8, cachedCalls: 0, promptTokens: 24_000, completionTokens: 8_000, costUsd: 0.2, latencyMs: 0 },
          test_has_assertions: { calls: 2, cachedCalls: 0, promptTokens: 6_000, completionTokens: 2_000, costUsd: 0.03, latencyMs: 0 },
          main_block_exists: { calls: 1, cachedCalls: 0, promptTokens: 3_000, completionTokens: 1_000, costUsd: 0.02, latencyMs: 0 },
        },
        byStep: {},
      },
      temporal: null,
    });
    const first = tracker.add(status(20, 2));
    expect(first.perMinute).toBeNull();
    expect(first.etaMs).toBeNull();
    now += 60_000;
    const second = tracker.add(status(50, 2));
    // 30 functions in the last minute; 4 repositories expected at 50 candidates each = 200, 150 left.
    expect(second.perMinute).toBe(30);
    expect(second.expectedFunctions).toBe(200);
    expect(second.etaMs).toBe(5 * 60_000);
    expect(second.elapsedMs).toBe(11 * 60_000);
    const line = formatProgressLine(second);
    expect(line).toBe(
      'repos 1/4 | functions 50/~200 (running: tests 3 test_check 1) | accepted 49, rejected 1 | rounds: debug 9 in 7 fn, coverage 5 in 4 fn | LLM 1200 calls, 2.5M tokens, $12.50, $0.26 per accepted record | ' +
        '30 refused (test_calls_target 19, parse_truncated 8, test_has_assertions 2): 120k tokens, $0.75 | 11m00s elapsed, ~5m00s left',
    );
  });
});

describe('cost per accepted record on the live line', () => {
  it('divides the cost by the records accepted so far (functions and classes), and says when none is', () => {
    expect(perAcceptedRecord(12.5, 49, [])).toBe('$0.26 per accepted record');
    expect(perAcceptedRecord(0.01, 4, [])).toBe('$0.0025 per accepted record');
    expect(perAcceptedRecord(3, 0, [])).toBe('no record accepted yet');
    expect(perAcceptedRecord(3, 10, ['local-model'])).toBe('price unknown per accepted record');
  });
});

describe('a run whose model has no price', () => {
  it('reads "price unknown" in the status and the progress line, never $0', async () => {
    const store = new LocalStore(fs.mkdtempSync(path.join(os.tmpdir(), 'repost-status-price-')));
    const settings = runSettingsFrom(loadConfig({ env: { OPENAI_MODEL: 'qwen2.5-coder:7b' } }));
    await store.createRun({ runId: 'run-p', createdAt: '2026-01-01T00:00:00.000Z', settingsKey: await store.putJson(settings), sourcesKey: null, sources: 1, outDir: null });
    const s = await runStatus(store, 'run-p');
    expect(s.unpricedModels).toEqual(['qwen2.5-coder:7b']);
    expect(formatRunStatus(s)).toContain('completion tokens, estimated price unknown for qwen2.5-coder:7b (not in llm.prices)');
    expect(formatRunStatus(s)).not.toContain('$0.0000');
    const line = formatProgressLine({ status: s, elapsedMs: 1000, expectedFunctions: 0, expectedClasses: 0, perMinute: null, etaMs: null });
    expect(line).toContain('LLM 0 calls, 0 tokens, price unknown for qwen2.5-coder:7b (not in llm.prices), price unknown per accepted record');
    expect(line).not.toContain('$0.00');
  });
});
