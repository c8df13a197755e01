/** Where things live under the data directory. */
import * as path from 'node:path';
import type { Config } from './schema';

/** Paths under the data directory, in one place. */
export function dataPaths(config: Pick<Config, 'dataDir'>) {
  const root = config.dataDir;
  return {
    root,
    artifacts: path.join(root, 'artifacts'),
    runs: path.join(root, 'runs'),
    snapshots: path.join(root, 'snapshots'),
    packages: path.join(root, 'packages'),
    temporalDb: path.join(root, 'temporal', 'dev-server.sqlite'),
    logs: path.join(root, 'logs'),
  };
}
