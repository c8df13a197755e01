/**
 * Brings the Temporal web UI up on the embedded dev server's SQLite file, so finished runs
 * (the demo's included) can be browsed: `npm run ui`, then open http://localhost:8233.
 * Stops with Ctrl-C. With TEMPORAL_ADDRESS set there is nothing to start: use that server's UI.
 */
import { loadConfig, dataPaths } from '../temporal.config';
import { runCommand } from './lib/cli';
import { startEmbeddedServer } from './lib/stack';

async function main(): Promise<void> {
  const config = loadConfig();
  if (config.temporal.address) {
    console.log(`TEMPORAL_ADDRESS is set (${config.temporal.address}): open that server's own web UI`);
    return;
  }
  const server = await startEmbeddedServer(config);
  console.log(`Temporal UI: ${server.uiUrl}/namespaces/${config.temporal.namespace}/workflows (database ${dataPaths(config).temporalDb})`);
  if (!server.owned) return;
  console.log('press Ctrl-C to stop');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.stop();
}

runCommand({ file: __filename, run: main });
