/**
 * A database of its own for a test, on the throwaway PostgreSQL server of the global setup, so
 * suites and cases never see each other's rows.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { requireEnv } from './factory';

/** Creates an empty database and returns its URL (the store migrates it at connect). */
export async function createStoreDatabase(label = 'it'): Promise<string> {
  const admin = requireEnv('REPOST_TEST_STORE_URL');
  const name = `repost_${label}_${randomBytes(4).toString('hex')}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const client = new Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}
