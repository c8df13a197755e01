/**
 * The store contract: the same cases against both implementations, the local data directory and
 * PostgreSQL (a database of its own on the throwaway server of the global setup). Whatever code
 * above the seam relies on is asserted here once for both.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ExchangeIndexEntry } from '../../../activities/store/exchanges';
import { Client as PgClient } from 'pg';
import { CorruptArtifactError } from '../../../activities/store/artifacts';
import { LocalStore } from '../../../activities/store/local';
import { PostgresStore } from '../../../activities/store/postgres';
import { RefusalTotalsSchema } from '../../../activities/store/refusals';
import { InvalidRunIdError, RunExistsError, allEvalResults, allRecords, type RepoProgress, type Store, type StoredRecord } from '../../../activities/store/types';
import { createStoreDatabase } from '../../support/store-database';
import { datasetRecordOf } from '../../support/records';

interface Backend {
  /** A store on a fresh, empty backing (folder or database). */
  open(): Promise<{
    store: Store;
    /** Another worker's view of the same store, with a data directory of its own where it has one. */
    second(): Promise<Store>;
    /** Damages a stored artifact's bytes behind the store's back (a bad disk, a hand edit). */
    corrupt(key: string, bytes: Buffer): Promise<void>;
  }>;
}

const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

const BACKENDS: [string, Backend][] = [
  [
    'local data directory',
    {
      async open() {
        const dir = tmp('repost-store-local-');
        const store = new LocalStore(dir);
        // Workers sharing a local store share its folder (one machine).
        return { store, second: async () => new LocalStore(dir), corrupt: async (key, bytes) => fs.writeFileSync(store.pathOf(key), bytes) };
      },
    },
  ],
  [
    'PostgreSQL',
    {
      async open() {
        const url = await createStoreDatabase('contract');
        const corrupt = async (key: string, bytes: Buffer) => {
          const client = new PgClient({ connectionString: url });
          await client.connect();
          try {
            await client.query('UPDATE artifacts SET content = $2 WHERE key = $1', [key, bytes]);
          } finally {
            await client.end();
          }
        };
        return { store: await PostgresStore.connect(url, tmp('repost-store-pg-')), second: () => PostgresStore.connect(url, tmp('repost-store-pg2-')), corrupt };
      },
    },
  ],
];

function fnRef(functionId: string, runLabel = 'r') {
  return { functionId, repoId: 'acme/tools', commit: 'a'.repeat(40), path: `pkg/${runLabel}.py`, qualname: `f_${functionId}`, name: `f_${functionId}`, split: 'train' as const, license: 'mit' };
}

function accepted(functionId: string, runId: string, tokens = 10): StoredRecord {
  const fn = fnRef(functionId);
  return {
    accepted: true,
    fn,
    settingsKey: 'sha256-' + '0'.repeat(64),
    record: datasetRecordOf(fn, runId, {
      packages: [{ name: 'numpy', version: '2.0.0' }],
      prompt_versions: { sandbox: 'sandbox@1', tests: 'tests@1' },
      coverage_rounds: 1,
      llm_tokens: tokens,
    }),
  };
}

function rejected(functionId: string, stage: string, reason = 'no'): StoredRecord {
  const fn = fnRef(functionId);
  return {
    accepted: false,
    fn,
    rejection: { function_id: functionId, repo_name: fn.repoId, func_path: fn.path, qualname: fn.qualname, split: 'train', stage, reason, debug_rounds: 3, coverage_rounds: 0, llm_tokens: 5 },
  };
}

function exchange(functionId: string, runId: string | undefined, n: number): ExchangeIndexEntry {
  return {
    exchangeKey: `sha256-${String(n).padStart(64, '0')}`,
    step: n % 2 ? 'tests' : 'sandbox',
    model: 'scripted',
    cached: false,
    promptTokens: 100 + n,
    completionTokens: 20,
    costUsd: 0.001,
    latencyMs: 5,
    functionId,
    ...(runId ? { runId } : {}),
    repoId: 'acme/tools',
    attempt: 0,
    recordedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
  };
}

function newRun(runId: string) {
  return { runId, createdAt: '2026-01-01T00:00:00.000Z', settingsKey: 'sha256-' + '1'.repeat(64), sourcesKey: null, sources: 2, outDir: '/tmp/out' };
}

/** Every file and link of a tree, with contents or targets, for comparing two trees. */
function treeListing(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, rel: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isSymbolicLink()) out[r] = `-> ${fs.readlinkSync(abs)}`;
      else if (e.isDirectory()) walk(abs, r);
      else out[r] = fs.readFileSync(abs, 'utf8');
    }
  };
  walk(root, '');
  return out;
}

describe.each(BACKENDS)('store contract: %s', (_name, backend) => {
  let store: Store;
  let second: () => Promise<Store>;
  let corrupt: (key: string, bytes: Buffer) => Promise<void>;
  const opened: Store[] = [];
  beforeAll(async () => {
    const b = await backend.open();
    store = b.store;
    corrupt = b.corrupt;
    second = async () => {
      const s = await b.second();
      opened.push(s);
      return s;
    };
    opened.push(store);
  });
  afterAll(async () => {
    for (const s of opened) await s.close();
  });

  it('has a stable id, the same for every process that opens it', async () => {
    const id = await store.storeId();
    expect(id).toMatch(new RegExp(`^${store.kind}:[0-9a-f-]{36}$`));
    expect(await store.storeId()).toBe(id);
    expect(await (await second()).storeId()).toBe(id);
  });

  it('keeps artifacts by content', async () => {
    const key = await store.put('hello\nworld ✓');
    expect(key).toMatch(/^sha256-[0-9a-f]{64}$/);
    expect(await store.put(Buffer.from('hello\nworld ✓', 'utf8'))).toBe(key);
    expect(await store.get(key)).toBe('hello\nworld ✓');
    expect(await store.has(key)).toBe(true);
    const json = await store.putJson({ b: 1, a: [1, 2] });
    expect(await store.getJson(json)).toEqual({ b: 1, a: [1, 2] });
    const missing = 'sha256-' + 'f'.repeat(64);
    expect(await store.has(missing)).toBe(false);
    await expect(store.get(missing)).rejects.toThrow(/missing/);
    await expect(store.get('not-a-key')).rejects.toThrow(/not an artifact key/);
    // Another process reads what this one wrote.
    expect(await (await second()).get(key)).toBe('hello\nworld ✓');
  });

  it('checks an artifact against its key when reading it: a damaged one is an error naming the key, and writing it again repairs it', async () => {
    const content = 'the sandboxed script\n'.repeat(50);
    const key = await store.put(content);
    for (const damage of [Buffer.from(content.replace('sandboxed', 'sandboxeD')), Buffer.from(content.slice(0, 100)), Buffer.alloc(0)]) {
      await corrupt(key, damage);
      const read = store.get(key);
      await expect(read).rejects.toBeInstanceOf(CorruptArtifactError);
      await expect(store.get(key)).rejects.toThrow(new RegExp(`artifact ${key} in .* is corrupt`));
      await expect(store.getJson(key)).rejects.toThrow(/is corrupt/);
    }
    // Written again (a retried activity, a re-run), the artifact is whole again.
    expect(await store.put(content)).toBe(key);
    expect(await store.get(key)).toBe(content);
    expect(await (await second()).get(key)).toBe(content);
  });

  it('refuses a run id that could name another folder or break a key, wherever it enters', async () => {
    const bad = ['..', '.', '../run-1', 'a/b', 'a\\b', 'run\n1', 'run\u00001', ' run', '.hidden', 'r..x', 'x'.repeat(129), ''];
    for (const runId of bad) {
      await expect(store.createRun(newRun(runId))).rejects.toBeInstanceOf(InvalidRunIdError);
      await expect(store.getRun(runId)).rejects.toThrow(/not a run id/);
      await expect(store.putRecord(runId, accepted('0001', 'run-1'))).rejects.toThrow(/not a run id/);
      await expect(store.listRecords(runId)).rejects.toThrow(/not a run id/);
      await expect(store.putEvalResult(runId, '0001', {})).rejects.toThrow(/not a run id/);
      await expect(store.putRepoProgress(runId, { index: 0, outcome: { repoId: null, source: { kind: 'github', fullName: 'a/b' }, skipped: 'x', candidates: 0, accepted: 0, rejected: 0 }, candidatePages: [], done: true })).rejects.toThrow(/not a run id/);
      await expect(store.runUsage(runId)).rejects.toThrow(/not a run id/);
      if (runId) await expect(store.appendExchange(exchange('fz', runId, 9))).rejects.toThrow(/not a run id/);
    }
    // The longest run id allowed is a run id.
    const longest = `r${'x'.repeat(127)}`;
    await store.createRun(newRun(longest));
    expect((await store.getRun(longest))?.runId).toBe(longest);
  });

  it('keeps records and results of different function ids apart, whatever characters and length they have', async () => {
    const run = 'run-names';
    const long = 'f'.repeat(3000);
    const ids = ['a/b', 'a_b', 'a:b', 'a b', '../a_b', '.a_b', `${long}1`, `${long}2`, 'ü', 'u', '0001'];
    for (const id of ids) await store.putRecord(run, rejected(id, 'execute', `reason of ${id}`));
    for (const id of ids) await store.putEvalResult(run, id, { of: id });
    for (const id of ids) {
      const r = await store.getRecord(run, id);
      expect(r?.fn.functionId).toBe(id);
      expect(r && !r.accepted && r.rejection.reason).toBe(`reason of ${id}`);
    }
    // Listed a page at a time, each once.
    const listed: string[] = [];
    for await (const r of allRecords(store, run, 2)) listed.push(r.fn.functionId);
    expect([...listed].sort()).toEqual([...ids].sort());
    const results: string[] = [];
    for await (const r of allEvalResults(store, run, 3)) {
      expect(r.result).toEqual({ of: r.functionId });
      results.push(r.functionId);
    }
    expect([...results].sort()).toEqual([...ids].sort());
    expect((await store.countRecords(run)).total).toBe(ids.length);
    expect([...(await store.recordedIds(run, ['a/b', 'a_c', `${long}1`]))].sort()).toEqual(['a/b', `${long}1`]);
    // Exchanges of two such functions stay apart too.
    await store.appendExchange(exchange('a/b', 'run-names', 11));
    await store.appendExchange(exchange('a_b', 'run-names', 12));
    expect((await store.listExchanges('a/b')).map((e) => e.promptTokens)).toEqual([111]);
    expect((await store.listExchanges('a_b')).map((e) => e.promptTokens)).toEqual([112]);
  });

  it('round-trips a snapshot, symlinks included, and another worker materialises it', async () => {
    const src = tmp('repost-snap-src-');
    fs.mkdirSync(path.join(src, 'pkg', 'sub'), { recursive: true });
    fs.writeFileSync(path.join(src, 'pkg', '__init__.py'), '');
    fs.writeFileSync(path.join(src, 'pkg', 'sub', 'mod.py'), 'def f(x):\n    return x + 1\n');
    fs.writeFileSync(path.join(src, 'README.md'), '# tools\n');
    fs.symlinkSync('sub/mod.py', path.join(src, 'pkg', 'alias.py'));
    fs.symlinkSync('/etc/passwd', path.join(src, 'outside'));
    fs.mkdirSync(path.join(src, '.git'));
    fs.writeFileSync(path.join(src, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const commit = 'tree-' + '3'.repeat(32);

    expect(await store.openSnapshot('acme/tools', commit)).toBeNull();
    await store.saveSnapshot('acme/tools', commit, src);
    // Saving again (a retried activity, another launcher) is a no-op.
    await store.saveSnapshot('acme/tools', commit, src);
    const expected = treeListing(src);
    delete expected['.git/HEAD'];

    const here = await store.openSnapshot('acme/tools', commit);
    expect(here).not.toBeNull();
    expect(treeListing(here!)).toEqual(expected);
    expect(fs.lstatSync(path.join(here!, 'pkg', 'alias.py')).isSymbolicLink()).toBe(true);

    const other = await second();
    const there = await other.openSnapshot('acme/tools', commit);
    expect(there).not.toBeNull();
    expect(treeListing(there!)).toEqual(expected);
    if (other.kind === 'postgres') {
      // Materialised into the other worker's own data directory, in the local layout.
      expect(there).not.toBe(here);
      expect(there!.endsWith(path.join('snapshots', 'acme', 'tools', commit, 'tree'))).toBe(true);
    }
    expect(await other.openSnapshot('acme/tools', 'b'.repeat(40))).toBeNull();
  });

  it('keeps the snapshot of any repository id inside its own folder, apart from every other, and refuses what is not a commit', async () => {
    const dataDir = (store as unknown as { dataDir: string }).dataDir;
    const root = path.join(dataDir, 'snapshots');
    const escape = `escaped-${path.basename(dataDir)}`;
    const ids = [
      `../../${escape}`, `../${escape}`, '..', '.', '../..', `a/../../${escape}`, `/tmp/${escape}`, 'acme//tools', 'acme/tools/extra', 'acme/tools/',
      'acme_tools', 'acme/tools_', '_other/acme_tools', 'a b/c', 'ü/x', '~/x', '-rf', `${'l'.repeat(3000)}1`, `${'l'.repeat(3000)}2`, '', 'acme/..', 'acme/.', 'snap/tools',
    ];
    const commit = 'c'.repeat(40);
    for (const id of ids) {
      const src = tmp('repost-snap-id-');
      fs.writeFileSync(path.join(src, 'id.json'), JSON.stringify(id));
      await store.saveSnapshot(id, commit, src);
    }
    // Another commit of the same id is another snapshot.
    const other = tmp('repost-snap-id-');
    fs.writeFileSync(path.join(other, 'id.json'), JSON.stringify('the other commit'));
    await store.saveSnapshot('acme/tools_', 'tree-' + '4'.repeat(32), other);
    const trees = new Set<string>();
    for (const id of ids) {
      const tree = await store.openSnapshot(id, commit);
      expect(tree).not.toBeNull();
      // Inside the store's snapshot folder, three plain names deep, and its own.
      const rel = path.relative(root, fs.realpathSync(tree!));
      expect(rel.split(path.sep)).toHaveLength(4);
      expect(rel.startsWith('..') || path.isAbsolute(rel)).toBe(false);
      expect(JSON.parse(fs.readFileSync(path.join(tree!, 'id.json'), 'utf8'))).toBe(id);
      trees.add(tree!);
    }
    expect(trees.size).toBe(ids.length);
    expect(JSON.parse(fs.readFileSync(path.join((await store.openSnapshot('acme/tools_', 'tree-' + '4'.repeat(32)))!, 'id.json'), 'utf8'))).toBe('the other commit');
    // Nothing was written beside the store or above it.
    expect(fs.existsSync(path.join(path.dirname(dataDir), escape))).toBe(false);
    expect(fs.existsSync(path.join(dataDir, escape))).toBe(false);
    expect(fs.existsSync(path.join('/tmp', escape))).toBe(false);
    // A GitHub repository keeps its readable place.
    expect(await store.openSnapshot('snap/tools', commit)).toBe(path.join(root, 'snap', 'tools', commit, 'tree'));

    const src = tmp('repost-snap-commit-');
    fs.writeFileSync(path.join(src, 'a.py'), 'x = 1\n');
    for (const bad of ['../x', 'a/b', '.', '..', '', 'x'.repeat(129), 'a\nb', '-rf', `tree-1/../../${escape}`, 'abc.def', ' abc', '/etc']) {
      await expect(store.saveSnapshot('acme/tools', bad, src)).rejects.toThrow(/not a commit id/);
      await expect(store.openSnapshot('acme/tools', bad)).rejects.toThrow(/not a commit id/);
    }
  });

  it('indexes LLM exchanges per function and per run, and caches answers', async () => {
    await store.appendExchange(exchange('fa', 'run-x', 1));
    await store.appendExchange(exchange('fb', 'run-x', 2));
    await store.appendExchange(exchange('fa', 'run-y', 3));
    await store.appendExchange(exchange('fa', undefined, 4));
    expect((await store.listExchanges('fa')).map((e) => e.promptTokens)).toEqual([101, 103, 104]);
    expect(await store.listExchanges('nobody')).toEqual([]);
    const ofRun: ExchangeIndexEntry[] = [];
    for await (const e of store.listRunExchanges('run-x')) ofRun.push(e);
    expect(ofRun).toEqual([exchange('fa', 'run-x', 1), exchange('fb', 'run-x', 2)]);
    // The run's usage, aggregated; asked again after more calls it counts those too.
    expect(await store.runUsage('run-x')).toMatchObject({ calls: 2, promptTokens: 203 });
    await store.appendExchange(exchange('fc', 'run-x', 5));
    expect(await store.runUsage('run-x')).toMatchObject({ calls: 3, promptTokens: 308 });
    expect(await store.runUsage('nobody')).toMatchObject({ calls: 0, promptTokens: 0 });

    const cacheKey = 'c'.repeat(64);
    expect(await store.cacheGet(cacheKey)).toBeNull();
    await store.cachePut(cacheKey, exchange('fa', 'run-x', 1).exchangeKey);
    expect(await (await second()).cacheGet(cacheKey)).toBe(exchange('fa', 'run-x', 1).exchangeKey);
    await store.cachePut(cacheKey, exchange('fa', 'run-x', 3).exchangeKey);
    expect(await store.cacheGet(cacheKey)).toBe(exchange('fa', 'run-x', 3).exchangeKey);
  });

  it('aggregates the refused answers of a run by check and by step', async () => {
    const reviewed = (n: number, refusedBy: string[] | undefined, runId = 'run-r') => ({ ...exchange(`f${n}`, runId, n), ...(refusedBy ? { refusedBy } : {}) });
    await store.appendExchange(reviewed(11, ['test_calls_target', 'test_calls_new_implementation'])); // tests, 111 prompt tokens
    await store.appendExchange(reviewed(13, ['test_calls_target'])); // tests, 113
    await store.appendExchange(reviewed(15, [])); // tests, passed
    await store.appendExchange(reviewed(12, ['parse_truncated'])); // sandbox, 112
    await store.appendExchange(reviewed(14, undefined)); // never reviewed
    await store.appendExchange(reviewed(17, ['test_calls_target'], 'run-other'));
    await store.appendExchange({ ...reviewed(21, ['test_calls_target']), cached: true, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyMs: 1 }); // tests, from the cache
    const r = await store.runRefusals('run-r');
    // A Usage like any other sum of calls (the same schema), plus the answers reviewed.
    expect(RefusalTotalsSchema.parse(r)).toEqual(r);
    expect(r).toMatchObject({ calls: 4, cachedCalls: 1, reviewed: 5, promptTokens: 336, completionTokens: 60, latencyMs: 16 });
    expect(r.costUsd).toBeCloseTo(0.003, 9);
    expect(r.byCheck).toEqual({
      test_calls_target: expect.objectContaining({ calls: 3, cachedCalls: 1, promptTokens: 224 }),
      test_calls_new_implementation: expect.objectContaining({ calls: 1, promptTokens: 111 }),
      parse_truncated: expect.objectContaining({ calls: 1, promptTokens: 112 }),
    });
    expect(r.byStep.tests).toMatchObject({ calls: 3, reviewed: 4 });
    expect(r.byStep.sandbox).toMatchObject({ calls: 1, reviewed: 1 });
    // Asked again after more calls, it counts those too.
    await store.appendExchange(reviewed(19, ['test_has_assertions']));
    expect(await store.runRefusals('run-r')).toMatchObject({ calls: 5, reviewed: 6 });
    expect((await store.runRefusals('nobody')).calls).toBe(0);
  });

  it('registers a run once, and updates it', async () => {
    const manifest = await store.createRun(newRun('run-1'));
    expect(manifest).toMatchObject({ runId: 'run-1', status: 'running', resumed: 0, kind: 'crawl', storeId: await store.storeId() });
    await expect(store.createRun(newRun('run-1'))).rejects.toBeInstanceOf(RunExistsError);
    expect(await store.getRun('run-1')).toEqual(manifest);
    expect(await store.getRun('run-none')).toBeNull();
    const summary = { runId: 'run-1', functions: 2, funnel: { sandbox: 2, accepted: 1 } };
    const done = await store.updateRun('run-1', { status: 'finished', summary, finishedAt: '2026-01-02T00:00:00.000Z' });
    expect(done).toMatchObject({ status: 'finished', summary });
    // Key order of what the run keeps is kept (it is exported as summary.json).
    expect(JSON.stringify((await (await second()).getRun('run-1'))!.summary)).toBe(JSON.stringify(summary));
    await expect(store.updateRun('run-none', { status: 'finished' })).rejects.toThrow(/no run run-none/);
  });

  it('writes one record per function with an upsert, and lists them in pages', async () => {
    const run = 'run-rec';
    const ids = ['0005', '0001', '0004', '0002', '0003'];
    for (const id of ids) await store.putRecord(run, rejected(id, 'execute'));
    await store.putRecord(run, accepted('0003', run));
    await store.putRecord(run, accepted('0004', run));
    await store.putRecord(run, accepted('0004', run, 99));
    await store.putRecord('run-other', accepted('0001', 'run-other'));

    expect(await store.getRecord(run, '0004')).toEqual(accepted('0004', run, 99));
    expect(await store.getRecord(run, '0009')).toBeNull();

    const first = await store.listRecords(run, { limit: 2 });
    expect(first.records.map((r) => r.fn.functionId)).toEqual(['0001', '0002']);
    expect(first.next).not.toBeNull();
    const secondPage = await store.listRecords(run, { after: first.next, limit: 2 });
    expect(secondPage.records.map((r) => r.fn.functionId)).toEqual(['0003', '0004']);
    const last = await store.listRecords(run, { after: secondPage.next, limit: 2 });
    expect(last.records.map((r) => r.fn.functionId)).toEqual(['0005']);
    expect(last.next).toBeNull();
    const exact = await store.listRecords(run, { limit: 5 });
    expect(exact.records).toHaveLength(5);
    expect(exact.next).toBeNull();
    const all: string[] = [];
    for await (const r of allRecords(store, run, 2)) all.push(r.fn.functionId);
    expect(all).toEqual(['0001', '0002', '0003', '0004', '0005']);

    expect([...(await store.recordedIds(run, ['0002', '0004', '0042']))].sort()).toEqual(['0002', '0004']);
    expect(await store.recordedIds(run, [])).toEqual(new Set());
    // Three rejections of three debug rounds each, two accepted records of one coverage round each.
    expect(await store.countRecords(run)).toEqual({
      total: 5,
      accepted: 2,
      byStage: { execute: 3, accepted: 2 },
      rounds: { debug: { functions: 3, rounds: 9 }, coverage: { functions: 2, rounds: 2 } },
      classes: { total: 0, accepted: 0, byStage: {}, rounds: { debug: { functions: 0, rounds: 0 }, coverage: { functions: 0, rounds: 0 } } },
    });
    expect(await store.countRecords('run-none')).toEqual({ total: 0, accepted: 0, byStage: {}, rounds: { debug: { functions: 0, rounds: 0 }, coverage: { functions: 0, rounds: 0 } }, classes: { total: 0, accepted: 0, byStage: {}, rounds: { debug: { functions: 0, rounds: 0 }, coverage: { functions: 0, rounds: 0 } } } });
    expect(await (await second()).getRecord(run, '0004')).toEqual(accepted('0004', run, 99));
    // A class environment's record (its stage and rounds too) is counted apart as well as among all.
    const cls = rejected('00c1', 'tests');
    await store.putRecord('run-cls', { ...cls, kind: 'class', fn: { ...cls.fn, kind: 'class' } } as StoredRecord);
    await store.putRecord('run-cls', rejected('0001', 'tests'));
    expect(await store.countRecords('run-cls')).toMatchObject({
      total: 2,
      accepted: 0,
      byStage: { tests: 2 },
      rounds: { debug: { functions: 2, rounds: 6 } },
      classes: { total: 1, accepted: 0, byStage: { tests: 1 }, rounds: { debug: { functions: 1, rounds: 3 }, coverage: { functions: 0, rounds: 0 } } },
    });
  });

  it('keeps one record when the same function is written concurrently from several workers', async () => {
    const run = 'run-race';
    const others = await Promise.all([second(), second()]);
    const writers = [store, ...others];
    const variants = Array.from({ length: 24 }, (_, i) => (i % 2 ? accepted('race', run, i) : rejected('race', 'debug', `variant ${i}`)));
    await Promise.all(variants.map((v, i) => writers[i % writers.length]!.putRecord(run, v)));
    const page = await store.listRecords(run);
    expect(page.records).toHaveLength(1);
    expect(variants).toContainEqual(page.records[0]);
    expect((await store.countRecords(run)).total).toBe(1);
    // Of runs registered at once under one id, exactly one is.
    const results = await Promise.allSettled(writers.map((w) => w.createRun(newRun('run-race'))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(RunExistsError);
  });

  it('writes one evaluation result per function with an upsert, and lists them in pages', async () => {
    const run = 'run-eval';
    for (const id of ['0003', '0001', '0002']) await store.putEvalResult(run, id, { function_id: id, n: 1, samples: [{ passed: false }] });
    await store.putEvalResult(run, '0002', { function_id: '0002', n: 2, samples: [{ passed: true }, { passed: false }] });
    await store.putEvalResult('run-other', '0001', { function_id: '0001', n: 9 });
    const first = await store.listEvalResults(run, { limit: 2 });
    expect(first.results.map((r) => r.functionId)).toEqual(['0001', '0002']);
    // The upsert replaced the earlier result, key order kept.
    expect(JSON.stringify(first.results[1]!.result)).toBe(JSON.stringify({ function_id: '0002', n: 2, samples: [{ passed: true }, { passed: false }] }));
    const rest = await (await second()).listEvalResults(run, { after: first.next, limit: 2 });
    expect(rest.results.map((r) => r.functionId)).toEqual(['0003']);
    expect(rest.next).toBeNull();
    const all: string[] = [];
    for await (const r of allEvalResults(store, run, 1)) all.push(r.functionId);
    expect(all).toEqual(['0001', '0002', '0003']);
    expect(await store.listEvalResults('run-none')).toEqual({ results: [], next: null });
  });

  it('keeps the progress of each repository of a run', async () => {
    const progress = (index: number, done: boolean, candidates: number): RepoProgress => ({
      index,
      outcome: { repoId: `acme/r${index}`, source: { kind: 'github', fullName: `acme/r${index}` }, skipped: null, candidates, accepted: done ? 1 : 0, rejected: 0 },
      candidatePages: [`sha256-${String(index).padStart(64, '0')}`],
      done,
    });
    await store.putRepoProgress('run-p', progress(1, false, 3));
    await store.putRepoProgress('run-p', progress(0, false, 2));
    await store.putRepoProgress('run-p', progress(0, true, 2));
    await store.putRepoProgress('run-q', progress(0, false, 7));
    expect(await store.listRepoProgress('run-p')).toEqual([progress(0, true, 2), progress(1, false, 3)]);
    expect(await (await second()).listRepoProgress('run-q')).toEqual([progress(0, false, 7)]);
    expect(await store.listRepoProgress('run-none')).toEqual([]);
  });
});
