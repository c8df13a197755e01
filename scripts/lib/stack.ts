/**
 * The embedded stack a command needs: a Temporal server (the configured one, or the dev server
 * with its SQLite file under the data directory), the sandbox image, and the workers.
 * Everything started here is stopped by `close()`.
 */
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { NativeConnection } from '@temporalio/worker';
import { openStore } from '../../activities/store';
import type { Store } from '../../activities/store/types';
import { ensureSandboxImage } from '../../sandbox-image/build';
import { installQuietRuntime, startWorkers, type RunningWorkers } from './workers';
import { reachStore } from './store-check';
import type { Config } from '../../temporal.config';
import { dataPaths } from '../../temporal.config';
import { resolveTemporalCli, startDevServer, type DevServer } from './temporal-server';

export interface Stack {
  address: string;
  uiUrl: string | null;
  client: Client;
  /** The configured store (the workers started here share it). */
  store: Store;
  image: string | null;
  close(): Promise<void>;
}

export interface StackOptions {
  config: Config;
  /** Run workers in this process (default true). */
  workers?: boolean;
  /** Build (or find) the sandbox image even without workers (default: only for workers). */
  image?: boolean;
  log?: (line: string) => void;
}

/** The embedded default: the dev server with its SQLite file under the data directory and the web UI. */
export function startEmbeddedServer(config: Config): Promise<DevServer> {
  const paths = dataPaths(config);
  return startDevServer({
    cli: resolveTemporalCli(config.temporal.cliPath),
    port: config.temporal.port,
    uiPort: config.temporal.uiPort,
    dbFile: paths.temporalDb,
    namespace: config.temporal.namespace,
    logFile: path.join(paths.logs, 'temporal.log'),
  });
}

export async function startStack({ config, workers = true, image: wantImage, log = () => undefined }: StackOptions): Promise<Stack> {
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch((err: Error) => log(`shutdown: ${err.message}`));
  };
  try {
    let address = config.temporal.address;
    let uiUrl: string | null = null;
    if (!address) {
      const server = await startEmbeddedServer(config);
      closers.push(() => server.stop());
      address = server.address;
      uiUrl = server.uiUrl;
      const db = dataPaths(config).temporalDb;
      log(
        server.origin === 'started'
          ? `started the Temporal dev server at ${address} (database ${db})`
          : server.origin === 'orphan'
            ? `found the Temporal dev server a stopped command left running at ${address} (database ${db}): using it, and stopping it at the end`
            : `using the Temporal dev server another command of this project runs at ${address} (database ${db})`,
      );
    }
    const store = await openStore(config);
    closers.push(() => store.close());
    // The store must answer before anything starts (a wrong URL or a database that is down).
    await reachStore(store);
    const image = (wantImage ?? workers) ? (config.sandbox.image ?? (await ensureSandboxImage({ log })).tag) : null;
    const connection = await Connection.connect({ address });
    closers.push(() => connection.close());
    if (config.temporal.address) await ensureSearchAttributes(connection, config.temporal.namespace, log);
    const client = new Client({ connection, namespace: config.temporal.namespace });
    if (workers) {
      installQuietRuntime();
      const native = await NativeConnection.connect({ address });
      closers.push(() => native.close());
      const running: RunningWorkers = await startWorkers({ config, connection: native, image: image ?? undefined, store, log });
      closers.push(() => running.shutdown());
    }
    return { address, uiUrl, client, store, image, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The factory's search attributes on a Temporal server it did not start (the embedded one
 * registers them itself): added when missing, so the workflows can set them. A server that does
 * not allow it (a hosted namespace) is told about in the log; register them there by hand.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string, log: (line: string) => void): Promise<void> {
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = Object.keys(SEARCH_ATTRIBUTES).filter((name) => !(customAttributes && name in customAttributes));
    if (missing.length === 0) return;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((name) => [name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
    });
    log(`registered the search attributes ${missing.join(', ')} in namespace ${namespace}`);
  } catch (err) {
    log(`could not check or register the search attributes (${Object.keys(SEARCH_ATTRIBUTES).join(', ')}) in namespace ${namespace}: ${(err as Error).message}; register them as Keyword attributes by hand`);
  }
}
