/**
 * Opening the store a configuration names: the only place that knows which implementations exist
 * (docs/architecture.md, invariant 11).
 */
import type { Config } from '../../temporal.config';
import { LocalStore } from './local';
import { PostgresStore } from './postgres';
import type { Store } from './types';

export * from './types';
export { LocalStore } from './local';

/** The configured store: PostgreSQL when `store.url` is set, else the local data directory. */
export async function openStore(config: Pick<Config, 'dataDir' | 'store'>): Promise<Store> {
  if (config.store.url) return PostgresStore.connect(config.store.url, config.dataDir, { poolSize: config.store.poolSize });
  return new LocalStore(config.dataDir);
}
