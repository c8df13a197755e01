/**
 * The store in a PostgreSQL database (`REPOST_STORE_URL=postgres://...`), shared by workers on
 * several machines. Everything a run keeps is a row: content-addressed artifacts (insert if
 * absent), repository snapshots as gzipped tar archives in chunks, the LLM exchange index and the
 * answer cache, the runs, one record per run and function (an upsert, so a retried or replayed
 * write never duplicates), one result per evaluation run and function (an upsert too), and the
 * repositories' progress.
 *
 * Snapshots are materialised on demand into this process's data directory, in the local layout
 * (`<dataDir>/snapshots/<owner>/<name>/<commit>/tree`), because the analysis reads files; the
 * local copy is a cache of the database's archive.
 *
 * The schema is migrated at connect (`postgres-migrations.ts`). The password of the URL is never
 * printed: `location` and every message name the database without it.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool, type PoolClient } from 'pg';
import { z } from 'zod';
import type { FunctionStage } from '../contracts';
import { artifactKeyOf, isArtifactKey, verifiedContent, type ArtifactKey } from './artifacts';
import { ExchangeIndexEntrySchema, type ExchangeIndexEntry } from './exchanges';
import { emptyRoundsRan } from './records';
import { addRefusalGroup, emptyRefusals, type RefusalTotals } from './refusals';
import { migrate } from './postgres-migrations';
import { packTree, SnapshotFolders } from './snapshots';
import {
  checkRunId,
  RepoProgressSchema,
  RunExistsError,
  RunManifestSchema,
  StoreUnreachableError,
  StoredRecordSchema,
  type EvalResultPage,
  type NewRun,
  type RecordCounts,
  type RecordPage,
  type RepoProgress,
  type RunManifest,
  type Store,
  type StoredRecord,
} from './types';
import type { Usage } from './usage';

/** Bytes per stored chunk of a snapshot archive: large enough to be few rows, small enough to hold in memory. */
const SNAPSHOT_CHUNK_BYTES = 8 * 1024 * 1024;
/** Exchanges fetched per query when a run's are listed. */
const EXCHANGE_PAGE = 1000;
const CONNECT_TIMEOUT_MS = 10_000;
const IDLE_TIMEOUT_MS = 30_000;

/** The URL without its password (and without a `password` parameter), for messages. */
export function redactStoreUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    u.searchParams.delete('password');
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1@');
  }
}

function passwordOf(url: string): string | null {
  try {
    const u = new URL(url);
    return decodeURIComponent(u.password) || u.searchParams.get('password') || null;
  } catch {
    return null;
  }
}

export interface PostgresStoreOptions {
  /** Connections this process keeps at most. */
  poolSize?: number;
}

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  private readonly snapshots: SnapshotFolders;
  /** Snapshots being materialised by this process, so concurrent activities fetch each once. */
  private readonly materializing = new Map<string, Promise<string | null>>();

  private constructor(
    private readonly pool: Pool,
    readonly location: string,
    readonly dataDir: string,
    private readonly id: string,
  ) {
    this.snapshots = new SnapshotFolders(path.join(dataDir, 'snapshots'));
  }

  /**
   * Connects, migrates the schema and reads the store id. A database that cannot be reached fails
   * here with `StoreUnreachableError` naming the database (without the password).
   */
  static async connect(url: string, dataDir: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const location = redactStoreUrl(url);
    const secret = passwordOf(url);
    const clean = (message: string) => (secret ? message.split(secret).join('***') : message);
    const pool = new Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      idleTimeoutMillis: IDLE_TIMEOUT_MS,
      application_name: 'repost-factory',
    });
    // An idle connection dropped by the server (a restart) must not end the process; the next query reconnects.
    pool.on('error', () => undefined);
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      await pool.end().catch(() => undefined);
      const e = err as Error & { code?: string };
      const hint = e.code === '3D000' ? ' (create the database first, e.g. `createdb`)' : '';
      throw new StoreUnreachableError(`cannot reach the store at ${location}: ${clean(e.message || String(e))}${hint}`);
    }
    let id: string;
    try {
      await migrate(client);
      const row = await client.query<{ value: string }>(`SELECT value FROM store_meta WHERE key = 'store_id'`);
      if (!row.rows[0]) throw new Error('store_meta has no store_id');
      id = `postgres:${row.rows[0].value}`;
    } catch (err) {
      client.release();
      await pool.end().catch(() => undefined);
      throw new Error(`cannot use the store at ${location}: ${clean((err as Error).message)}`);
    }
    client.release();
    return new PostgresStore(pool, location, path.resolve(dataDir), id);
  }

  async storeId(): Promise<string> {
    return this.id;
  }

  private async inTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  // Artifacts ---------------------------------------------------------------------------------

  private checkKey(key: ArtifactKey): void {
    if (!isArtifactKey(key)) throw new Error(`not an artifact key: ${JSON.stringify(key)}`);
  }

  async put(content: string | Buffer): Promise<ArtifactKey> {
    const key = artifactKeyOf(content);
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    // An artifact already there is kept, unless its bytes were damaged: then they are written again.
    await this.pool.query('INSERT INTO artifacts (key, content) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET content = excluded.content WHERE artifacts.content <> excluded.content', [key, bytes]);
    return key;
  }

  async putJson(value: unknown): Promise<ArtifactKey> {
    return this.put(JSON.stringify(value));
  }

  async has(key: ArtifactKey): Promise<boolean> {
    this.checkKey(key);
    return (await this.pool.query('SELECT 1 FROM artifacts WHERE key = $1', [key])).rowCount === 1;
  }

  async get(key: ArtifactKey): Promise<string> {
    this.checkKey(key);
    const r = await this.pool.query<{ content: Buffer }>('SELECT content FROM artifacts WHERE key = $1', [key]);
    if (!r.rows[0]) throw new Error(`artifact ${key} is missing from the store at ${this.location}`);
    return verifiedContent(key, r.rows[0].content, `the store at ${this.location}`);
  }

  async getJson<T = unknown>(key: ArtifactKey): Promise<T> {
    return JSON.parse(await this.get(key)) as T;
  }

  // Snapshots ---------------------------------------------------------------------------------

  async saveSnapshot(repoId: string, commit: string, dir: string): Promise<void> {
    this.snapshots.dirFor(repoId, commit); // validates the commit id
    if (await this.hasSnapshot(repoId, commit)) return;
    await this.inTransaction(async (client) => {
      // One writer per snapshot; a second one waits, then finds it stored.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`snapshot:${repoId}@${commit}`]);
      if ((await client.query('SELECT 1 FROM snapshots WHERE repo_id = $1 AND commit_id = $2', [repoId, commit])).rowCount) return;
      const sha = createHash('sha256');
      let seq = 0;
      let total = 0;
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const flush = async () => {
        if (pendingBytes === 0) return;
        const data = Buffer.concat(pending, pendingBytes);
        await client.query('INSERT INTO snapshot_chunks (repo_id, commit_id, seq, data) VALUES ($1, $2, $3, $4)', [repoId, commit, seq++, data]);
        pending = [];
        pendingBytes = 0;
      };
      for await (const chunk of packTree(dir)) {
        sha.update(chunk);
        total += chunk.length;
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= SNAPSHOT_CHUNK_BYTES) await flush();
      }
      await flush();
      await client.query('INSERT INTO snapshots (repo_id, commit_id, chunks, archive_bytes, archive_sha256) VALUES ($1, $2, $3, $4, $5)', [
        repoId,
        commit,
        seq,
        total,
        sha.digest('hex'),
      ]);
    });
  }

  private async hasSnapshot(repoId: string, commit: string): Promise<boolean> {
    return (await this.pool.query('SELECT 1 FROM snapshots WHERE repo_id = $1 AND commit_id = $2', [repoId, commit])).rowCount === 1;
  }

  async openSnapshot(repoId: string, commit: string): Promise<string | null> {
    const tree = this.snapshots.treeDir(repoId, commit);
    if (fs.existsSync(tree)) return tree;
    const id = `${repoId}@${commit}`;
    let pending = this.materializing.get(id);
    if (!pending) {
      pending = this.materialize(repoId, commit).finally(() => this.materializing.delete(id));
      this.materializing.set(id, pending);
    }
    return pending;
  }

  /** Fetches the archive chunk by chunk into `tar`, building the local copy of the tree. */
  private async materialize(repoId: string, commit: string): Promise<string | null> {
    const row = await this.pool.query<{ chunks: number; archive_sha256: string }>('SELECT chunks, archive_sha256 FROM snapshots WHERE repo_id = $1 AND commit_id = $2', [repoId, commit]);
    const meta = row.rows[0];
    if (!meta) return null;
    const pool = this.pool;
    const location = this.location;
    async function* chunks(): AsyncIterable<Buffer> {
      const sha = createHash('sha256');
      for (let seq = 0; seq < meta!.chunks; seq++) {
        const r = await pool.query<{ data: Buffer }>('SELECT data FROM snapshot_chunks WHERE repo_id = $1 AND commit_id = $2 AND seq = $3', [repoId, commit, seq]);
        if (!r.rows[0]) throw new Error(`snapshot ${repoId}@${commit} in the store at ${location} lacks chunk ${seq}`);
        sha.update(r.rows[0].data);
        yield r.rows[0].data;
      }
      if (sha.digest('hex') !== meta!.archive_sha256) throw new Error(`snapshot ${repoId}@${commit} in the store at ${location} is corrupt (archive checksum differs)`);
    }
    return (await this.snapshots.adoptArchive(repoId, commit, chunks())).dir;
  }

  // LLM exchanges -----------------------------------------------------------------------------

  async appendExchange(entry: ExchangeIndexEntry): Promise<void> {
    if (entry.runId) checkRunId(entry.runId);
    await this.pool.query('INSERT INTO exchanges (function_id, run_id, exchange_key, entry) VALUES ($1, $2, $3, $4) ON CONFLICT (function_id, exchange_key) DO NOTHING', [
      entry.functionId,
      entry.runId ?? null,
      entry.exchangeKey,
      JSON.stringify(ExchangeIndexEntrySchema.parse(entry)),
    ]);
  }

  async listExchanges(functionId: string): Promise<ExchangeIndexEntry[]> {
    const r = await this.pool.query<{ entry: unknown }>('SELECT entry FROM exchanges WHERE function_id = $1 ORDER BY id', [functionId]);
    return r.rows.map((row) => ExchangeIndexEntrySchema.parse(row.entry));
  }

  async *listRunExchanges(runId: string): AsyncIterable<ExchangeIndexEntry> {
    checkRunId(runId);
    let after = '0';
    for (;;) {
      const r = await this.pool.query<{ id: string; entry: unknown }>('SELECT id, entry FROM exchanges WHERE run_id = $1 AND id > $2 ORDER BY id LIMIT $3', [runId, after, EXCHANGE_PAGE]);
      for (const row of r.rows) yield ExchangeIndexEntrySchema.parse(row.entry);
      if (r.rows.length < EXCHANGE_PAGE) return;
      after = r.rows[r.rows.length - 1]!.id;
    }
  }

  async runUsage(runId: string): Promise<Usage> {
    checkRunId(runId);
    const r = await this.pool.query<{ calls: string; cached: string | null; prompt: string | null; cached_prompt: string | null; completion: string | null; cost: string | null; latency: string | null }>(
      `SELECT count(*) AS calls,
              sum(CASE WHEN (entry->>'cached')::boolean THEN 1 ELSE 0 END) AS cached,
              sum((entry->>'promptTokens')::numeric) AS prompt,
              sum(coalesce((entry->>'cachedPromptTokens')::numeric, 0)) AS cached_prompt,
              sum((entry->>'completionTokens')::numeric) AS completion,
              sum((entry->>'costUsd')::numeric) AS cost,
              sum((entry->>'latencyMs')::numeric) AS latency
         FROM exchanges WHERE run_id = $1`,
      [runId],
    );
    const row = r.rows[0]!;
    return {
      calls: Number(row.calls),
      cachedCalls: Number(row.cached ?? 0),
      promptTokens: Number(row.prompt ?? 0),
      cachedPromptTokens: Number(row.cached_prompt ?? 0),
      completionTokens: Number(row.completion ?? 0),
      costUsd: Number(row.cost ?? 0),
      latencyMs: Number(row.latency ?? 0),
    };
  }

  async runRefusals(runId: string): Promise<RefusalTotals> {
    checkRunId(runId);
    // Grouped by step and by the (few) distinct lists of refusing checks, then folded here.
    const r = await this.pool.query<{ step: string | null; refused: string; n: string; cached: string | null; prompt: string | null; cached_prompt: string | null; completion: string | null; cost: string | null; latency: string | null }>(
      `SELECT entry->>'step' AS step, entry->>'refusedBy' AS refused, count(*) AS n,
              sum(CASE WHEN (entry->>'cached')::boolean THEN 1 ELSE 0 END) AS cached,
              sum((entry->>'promptTokens')::numeric) AS prompt,
              sum(coalesce((entry->>'cachedPromptTokens')::numeric, 0)) AS cached_prompt,
              sum((entry->>'completionTokens')::numeric) AS completion,
              sum((entry->>'costUsd')::numeric) AS cost,
              sum((entry->>'latencyMs')::numeric) AS latency
         FROM exchanges WHERE run_id = $1 AND entry->>'refusedBy' IS NOT NULL
        GROUP BY 1, 2`,
      [runId],
    );
    const totals = emptyRefusals();
    for (const row of r.rows) {
      const refusedBy = z.array(z.string()).parse(JSON.parse(row.refused));
      const usage = {
        calls: Number(row.n),
        cachedCalls: Number(row.cached ?? 0),
        promptTokens: Number(row.prompt ?? 0),
        cachedPromptTokens: Number(row.cached_prompt ?? 0),
        completionTokens: Number(row.completion ?? 0),
        costUsd: Number(row.cost ?? 0),
        latencyMs: Number(row.latency ?? 0),
      };
      addRefusalGroup(totals, { step: row.step ?? undefined, refusedBy }, usage);
    }
    return totals;
  }

  async cacheGet(cacheKey: string): Promise<ArtifactKey | null> {
    const r = await this.pool.query<{ exchange_key: string }>('SELECT exchange_key FROM llm_cache WHERE cache_key = $1', [cacheKey]);
    return r.rows[0]?.exchange_key ?? null;
  }

  async cachePut(cacheKey: string, exchangeKey: ArtifactKey): Promise<void> {
    await this.pool.query(
      'INSERT INTO llm_cache (cache_key, exchange_key) VALUES ($1, $2) ON CONFLICT (cache_key) DO UPDATE SET exchange_key = excluded.exchange_key, cached_at = now()',
      [cacheKey, exchangeKey],
    );
  }

  // Runs ----------------------------------------------------------------------------------------

  async createRun(run: NewRun): Promise<RunManifest> {
    checkRunId(run.runId);
    const manifest = RunManifestSchema.parse({ ...run, storeId: this.id, status: 'running', resumed: 0 });
    const r = await this.pool.query('INSERT INTO runs (run_id, manifest) VALUES ($1, $2) ON CONFLICT (run_id) DO NOTHING', [run.runId, JSON.stringify(manifest)]);
    if (r.rowCount !== 1) throw new RunExistsError(`run ${run.runId} already exists in the store at ${this.location}`);
    return manifest;
  }

  async getRun(runId: string): Promise<RunManifest | null> {
    checkRunId(runId);
    const r = await this.pool.query<{ manifest: unknown }>('SELECT manifest FROM runs WHERE run_id = $1', [runId]);
    return r.rows[0] ? RunManifestSchema.parse(r.rows[0].manifest) : null;
  }

  async updateRun(runId: string, patch: Partial<Pick<RunManifest, 'status' | 'summary' | 'finishedAt' | 'outDir' | 'resumed'>>): Promise<RunManifest> {
    checkRunId(runId);
    return this.inTransaction(async (client) => {
      const r = await client.query<{ manifest: unknown }>('SELECT manifest FROM runs WHERE run_id = $1 FOR UPDATE', [runId]);
      if (!r.rows[0]) throw new Error(`no run ${runId} in the store at ${this.location}`);
      const next = RunManifestSchema.parse({ ...RunManifestSchema.parse(r.rows[0].manifest), ...patch });
      await client.query('UPDATE runs SET manifest = $2, updated_at = now() WHERE run_id = $1', [runId, JSON.stringify(next)]);
      return next;
    });
  }

  // Records -----------------------------------------------------------------------------------

  async putRecord(runId: string, record: StoredRecord): Promise<void> {
    checkRunId(runId);
    const r = StoredRecordSchema.parse(record);
    const stage = r.accepted ? 'accepted' : r.rejection.stage;
    await this.pool.query(
      `INSERT INTO records (run_id, function_id, accepted, stage, record) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (run_id, function_id) DO UPDATE SET accepted = excluded.accepted, stage = excluded.stage, record = excluded.record, updated_at = now()`,
      [runId, r.fn.functionId, r.accepted, stage, JSON.stringify(r)],
    );
  }

  async getRecord(runId: string, functionId: string): Promise<StoredRecord | null> {
    checkRunId(runId);
    const r = await this.pool.query<{ record: unknown }>('SELECT record FROM records WHERE run_id = $1 AND function_id = $2', [runId, functionId]);
    return r.rows[0] ? StoredRecordSchema.parse(r.rows[0].record) : null;
  }

  async listRecords(runId: string, options: { after?: string | null; limit?: number } = {}): Promise<RecordPage> {
    checkRunId(runId);
    const { rows, next } = await this.pageByFunctionId('records', 'record', runId, options.after, options.limit ?? 500);
    return { records: rows.map((row) => StoredRecordSchema.parse(row.value)), next };
  }

  /**
   * One page of a run's rows of `table` in function id order, after `after`: the rows (`value`
   * is `column`) and the id to ask after for the next page. One row more than asked tells whether
   * another page follows.
   */
  private async pageByFunctionId(
    table: 'records' | 'eval_results',
    column: 'record' | 'result',
    runId: string,
    after: string | null | undefined,
    limit: number,
  ): Promise<{ rows: { function_id: string; value: unknown }[]; next: string | null }> {
    const r = await this.pool.query<{ function_id: string; value: unknown }>(
      `SELECT function_id, ${column} AS value FROM ${table} WHERE run_id = $1 AND ($2::text IS NULL OR function_id > $2::text) ORDER BY function_id LIMIT $3`,
      [runId, after ?? null, limit + 1],
    );
    const rows = r.rows.slice(0, limit);
    return { rows, next: r.rows.length > limit ? rows[rows.length - 1]!.function_id : null };
  }

  async recordedIds(runId: string, functionIds: string[]): Promise<Set<string>> {
    checkRunId(runId);
    if (functionIds.length === 0) return new Set();
    const r = await this.pool.query<{ function_id: string }>('SELECT function_id FROM records WHERE run_id = $1 AND function_id = ANY($2::text[])', [runId, functionIds]);
    return new Set(r.rows.map((row) => row.function_id));
  }

  async countRecords(runId: string): Promise<RecordCounts> {
    checkRunId(runId);
    const rounds = (field: string) => `COALESCE((record->'record'->>'${field}')::int, (record->'rejection'->>'${field}')::int, 0)`;
    const r = await this.pool.query<{ stage: string; is_class: boolean; n: string; debug_fns: string; debug: string; coverage_fns: string; coverage: string }>(
      `SELECT stage, (record->>'kind' IS NOT DISTINCT FROM 'class') AS is_class, count(*) AS n,
              sum(CASE WHEN ${rounds('debug_rounds')} > 0 THEN 1 ELSE 0 END) AS debug_fns, sum(${rounds('debug_rounds')}) AS debug,
              sum(CASE WHEN ${rounds('coverage_rounds')} > 0 THEN 1 ELSE 0 END) AS coverage_fns, sum(${rounds('coverage_rounds')}) AS coverage
         FROM records WHERE run_id = $1 GROUP BY stage, is_class`,
      [runId],
    );
    const counts: RecordCounts = { total: 0, accepted: 0, byStage: {}, rounds: emptyRoundsRan(), classes: { total: 0, accepted: 0, byStage: {}, rounds: emptyRoundsRan() } };
    const addRounds = (to: RecordCounts['rounds'], row: (typeof r.rows)[number]) => {
      to.debug.functions += Number(row.debug_fns);
      to.debug.rounds += Number(row.debug);
      to.coverage.functions += Number(row.coverage_fns);
      to.coverage.rounds += Number(row.coverage);
    };
    for (const row of r.rows) {
      const n = Number(row.n);
      const stage = row.stage as FunctionStage;
      counts.total += n;
      if (stage === 'accepted') counts.accepted += n;
      counts.byStage[stage] = (counts.byStage[stage] ?? 0) + n;
      addRounds(counts.rounds, row);
      if (row.is_class) {
        counts.classes.total += n;
        if (stage === 'accepted') counts.classes.accepted += n;
        counts.classes.byStage[stage] = (counts.classes.byStage[stage] ?? 0) + n;
        addRounds(counts.classes.rounds, row);
      }
    }
    return counts;
  }

  // Evaluation results ------------------------------------------------------------------------

  async putEvalResult(runId: string, functionId: string, result: unknown): Promise<void> {
    checkRunId(runId);
    await this.pool.query(
      `INSERT INTO eval_results (run_id, function_id, result) VALUES ($1, $2, $3)
       ON CONFLICT (run_id, function_id) DO UPDATE SET result = excluded.result, updated_at = now()`,
      [runId, functionId, JSON.stringify(result)],
    );
  }

  async listEvalResults(runId: string, options: { after?: string | null; limit?: number } = {}): Promise<EvalResultPage> {
    checkRunId(runId);
    const { rows, next } = await this.pageByFunctionId('eval_results', 'result', runId, options.after, options.limit ?? 200);
    return { results: rows.map((row) => ({ functionId: row.function_id, result: row.value })), next };
  }

  // Repositories ------------------------------------------------------------------------------

  async putRepoProgress(runId: string, progress: RepoProgress): Promise<void> {
    checkRunId(runId);
    const p = RepoProgressSchema.parse(progress);
    await this.pool.query(
      `INSERT INTO repo_progress (run_id, idx, done, progress) VALUES ($1, $2, $3, $4)
       ON CONFLICT (run_id, idx) DO UPDATE SET done = excluded.done, progress = excluded.progress, updated_at = now()`,
      [runId, p.index, p.done, JSON.stringify(p)],
    );
  }

  async listRepoProgress(runId: string): Promise<RepoProgress[]> {
    checkRunId(runId);
    const r = await this.pool.query<{ progress: unknown }>('SELECT progress FROM repo_progress WHERE run_id = $1 ORDER BY idx', [runId]);
    return r.rows.map((row) => RepoProgressSchema.parse(row.progress) as RepoProgress);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
