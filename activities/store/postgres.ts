/** PostgreSQL store: not built yet. */
import type { Store } from './types';

export const PostgresStore = {
  async connect(_url: string, _dataDir: string): Promise<Store> {
    throw new Error('the PostgreSQL store is not available in this build');
  },
};
