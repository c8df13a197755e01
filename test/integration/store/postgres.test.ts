/**
 * What only the PostgreSQL store has: connecting (a database that is down or missing, the password
 * never shown), a database that goes away and comes back, migrations run once when several
 * processes start at once, a schema newer than the program, and snapshot archives larger than one
 * chunk or damaged in the database.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { MIGRATIONS } from '../../../activities/store/postgres-migrations';
import { PostgresStore, redactStoreUrl } from '../../../activities/store/postgres';
import { StoreUnreachableError } from '../../../activities/store/types';
import { startPostgresServer } from '../../../scripts/lib/postgres-server';
import { freePort } from '../../../scripts/lib/temporal-server';
import { requireEnv } from '../../support/factory';
import { createStoreDatabase } from '../../support/store-database';

const made: string[] = [];
const tmp = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

async function sql<T extends Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text, values)).rows;
  } finally {
    await c.end();
  }
}

describe('the PostgreSQL store', () => {
  it('says which database it cannot reach, without the password', async () => {
    const port = await freePort();
    const url = `postgres://alice:s3cret-pw@127.0.0.1:${port}/factory`;
    const err = await PostgresStore.connect(url, tmp('repost-pg-')).catch((e: Error) => e);
    expect(err).toBeInstanceOf(StoreUnreachableError);
    expect((err as Error).message).toMatch(new RegExp(`^cannot reach the store at postgres://alice@127\\.0\\.0\\.1:${port}/factory: .*ECONNREFUSED`));
    expect((err as Error).message).not.toContain('s3cret-pw');
    expect(redactStoreUrl('postgres://alice:s3cret-pw@db.example:5432/factory?sslmode=require')).toBe('postgres://alice@db.example:5432/factory?sslmode=require');
  });

  it('says when the database does not exist', async () => {
    const url = new URL(requireEnv('REPOST_TEST_STORE_URL'));
    url.pathname = '/no_such_database';
    const err = await PostgresStore.connect(url.toString(), tmp('repost-pg-')).catch((e: Error) => e);
    expect(err).toBeInstanceOf(StoreUnreachableError);
    expect((err as Error).message).toMatch(/database "no_such_database" does not exist \(create the database first/);
  });

  it('fails calls while its database is down, and works again when it is back, in the same process', async () => {
    // A server of this test's own: it is stopped as a crash would stop it.
    const server = await startPostgresServer();
    try {
      const store = await PostgresStore.connect(server.url, tmp('repost-pg-'));
      const key = await store.put('kept across the outage');
      await server.restart(async () => {
        await expect(store.get(key)).rejects.toThrow(/ECONNREFUSED|terminat|connect/i);
        await expect(store.putRecord('run', { accepted: false, fn: { functionId: 'f', repoId: 'r', commit: 'c', path: 'p', qualname: 'q', name: 'q', split: 'train', license: null }, rejection: { function_id: 'f', repo_name: 'r', func_path: 'p', qualname: 'q', split: 'train', stage: 'sandbox', reason: 'x', debug_rounds: 0, coverage_rounds: 0, llm_tokens: 0 } })).rejects.toThrow();
      });
      // The connections the outage broke are replaced; nothing written before it is lost.
      expect(await store.get(key)).toBe('kept across the outage');
      expect(await store.getRecord('run', 'f')).toBeNull();
      await store.close();
    } finally {
      await server.stop();
    }
  });

  it('migrates a new database once when several processes connect at once', async () => {
    const url = await createStoreDatabase('migrate');
    const stores = await Promise.all(Array.from({ length: 6 }, () => PostgresStore.connect(url, tmp('repost-pg-'))));
    try {
      const ids = new Set(await Promise.all(stores.map((s) => s.storeId())));
      expect(ids.size).toBe(1);
      expect(stores[0]!.location).toBe(url);
      const rows = await sql<{ version: number }>(url, 'SELECT version FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      for (const s of stores) await s.close();
    }
    // A database of its own has an id of its own.
    const other = await PostgresStore.connect(await createStoreDatabase('migrate'), tmp('repost-pg-'));
    expect(await other.storeId()).not.toBe(await stores[0]!.storeId());
    await other.close();
  });

  it('refuses a schema newer than the program', async () => {
    const url = await createStoreDatabase('newer');
    await (await PostgresStore.connect(url, tmp('repost-pg-'))).close();
    await sql(url, `INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')`);
    await expect(PostgresStore.connect(url, tmp('repost-pg-'))).rejects.toThrow(/schema is at version 999, newer than this program knows/);
  });

  it('stores a snapshot larger than one chunk, and refuses a damaged one without leaving a half tree', async () => {
    const url = await createStoreDatabase('snap');
    const writer = await PostgresStore.connect(url, tmp('repost-pg-'));
    const src = tmp('repost-big-');
    // Random bytes do not compress: the archive spans two chunks.
    const blob = randomBytes(9 * 1024 * 1024);
    fs.writeFileSync(path.join(src, 'data.bin'), blob);
    fs.writeFileSync(path.join(src, 'main.py'), 'print(1)\n');
    await writer.saveSnapshot('acme/big', 'c'.repeat(40), src);
    await writer.saveSnapshot('acme/broken', 'd'.repeat(40), src);
    expect((await sql<{ chunks: number }>(url, 'SELECT chunks FROM snapshots WHERE repo_id = $1', ['acme/big']))[0]!.chunks).toBe(2);

    const reader = await PostgresStore.connect(url, tmp('repost-pg-'));
    const tree = await reader.openSnapshot('acme/big', 'c'.repeat(40));
    expect(fs.readFileSync(path.join(tree!, 'data.bin')).equals(blob)).toBe(true);

    await sql(url, `UPDATE snapshot_chunks SET data = 'garbage'::bytea WHERE repo_id = 'acme/broken' AND seq = 1`);
    await expect(reader.openSnapshot('acme/broken', 'd'.repeat(40))).rejects.toThrow(/acme\/broken@d+ .*(corrupt|unpack)/);
    const parent = path.join(reader.dataDir, 'snapshots', 'acme', 'broken');
    expect(fs.existsSync(parent) ? fs.readdirSync(parent) : []).toEqual([]);
    await writer.close();
    await reader.close();
  });
});
