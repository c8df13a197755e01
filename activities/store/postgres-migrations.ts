/**
 * The PostgreSQL store's schema, as ordered migrations. Each runs once per database, in its own
 * transaction, and is recorded in `schema_migrations`; `migrate()` runs the missing ones at
 * connect under an advisory lock, so several workers starting at once apply each exactly once.
 * A migration is never edited once released: a change is a new migration at the end.
 *
 * JSON values are kept as `json` (their text as written, key order included), not `jsonb`:
 * the store never queries inside them, and the exported files keep the order the code wrote.
 * Sorted text keys use the "C" collation, so pages come in the byte order the local store uses.
 */
import type { PoolClient } from 'pg';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'artifacts, snapshots, exchanges, answer cache, runs, records, repository progress',
    sql: `
      CREATE TABLE store_meta (key text PRIMARY KEY, value text NOT NULL);
      INSERT INTO store_meta (key, value) VALUES ('store_id', gen_random_uuid()::text);

      CREATE TABLE artifacts (
        key text PRIMARY KEY,
        content bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );

      -- A snapshot is a gzipped tar of the tree in chunks; the snapshots row is written last, in
      -- the same transaction, so a snapshot is either complete or absent.
      CREATE TABLE snapshots (
        repo_id text NOT NULL,
        commit_id text NOT NULL,
        chunks integer NOT NULL,
        archive_bytes bigint NOT NULL,
        archive_sha256 text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (repo_id, commit_id)
      );
      CREATE TABLE snapshot_chunks (
        repo_id text NOT NULL,
        commit_id text NOT NULL,
        seq integer NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (repo_id, commit_id, seq)
      );
      -- gzip does not compress again: store the chunks as they are.
      ALTER TABLE snapshot_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

      CREATE TABLE exchanges (
        id bigserial PRIMARY KEY,
        function_id text NOT NULL,
        run_id text,
        exchange_key text NOT NULL,
        entry json NOT NULL
      );
      -- An append retried after a lost reply is not recorded twice.
      CREATE UNIQUE INDEX exchanges_function_exchange ON exchanges (function_id, exchange_key);
      CREATE INDEX exchanges_function ON exchanges (function_id, id);
      CREATE INDEX exchanges_run ON exchanges (run_id, id) WHERE run_id IS NOT NULL;

      CREATE TABLE llm_cache (
        cache_key text PRIMARY KEY,
        exchange_key text NOT NULL,
        cached_at timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE runs (
        run_id text PRIMARY KEY,
        manifest json NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE records (
        run_id text COLLATE "C" NOT NULL,
        function_id text COLLATE "C" NOT NULL,
        accepted boolean NOT NULL,
        stage text NOT NULL,
        record json NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_id, function_id)
      );

      CREATE TABLE repo_progress (
        run_id text NOT NULL,
        idx integer NOT NULL,
        done boolean NOT NULL,
        progress json NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_id, idx)
      );
    `,
  },
  {
    version: 2,
    name: 'evaluation results',
    sql: `
      CREATE TABLE eval_results (
        run_id text COLLATE "C" NOT NULL,
        function_id text COLLATE "C" NOT NULL,
        result json NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_id, function_id)
      );
    `,
  },
];

/** One lock id for "migrating the store's schema", shared by every process using the database. */
const MIGRATION_LOCK = 0x5245_504f; // 'REPO'

export class SchemaTooNewError extends Error {
  override name = 'SchemaTooNewError';
}

/** Applies the migrations the database lacks; returns the versions applied now. */
export async function migrate(client: PoolClient, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const applied = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const known = Math.max(0, ...migrations.map((m) => m.version));
    const newest = Math.max(0, ...applied);
    if (newest > known) {
      throw new SchemaTooNewError(`the store's schema is at version ${newest}, newer than this program knows (${known}): update the program on this machine`);
    }
    const done: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`store schema migration ${m.version} (${m.name}) failed: ${(err as Error).message}`);
      }
      done.push(m.version);
    }
    return done;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
  }
}
