/**
 * A Temporal server restart mid-crawl. The test runs its own dev server on a SQLite file (the
 * shared test server must stay up for the other suites), stops it while functions are in
 * flight, and starts it again on the same file: the workers and the waiting client reconnect, and
 * the crawl ends with the same accepted functions as an undisturbed one.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { LocalStore } from '../../activities/store/local';
import { startCrawl } from '../../scripts/lib/crawl';
import { loadLlmScript, startScriptedLlmServer } from '../../scripts/scripted-llm/server';
import { freePort, resolveTemporalCli, startDevServer, type DevServer } from '../../scripts/lib/temporal-server';
import { installQuietRuntime, startWorkers } from '../../scripts/lib/workers';
import { acceptedQualnames } from '../support/fixtures';
import { requireEnv, testConfig } from '../support/factory';
import { waitFor } from '../support/processes';

const DEMO_REPO = path.resolve(__dirname, '../../scripts/demo/example-repo');
const DEMO_SCRIPT = path.resolve(__dirname, '../../scripts/demo/scripted-llm-responses.json');

describe('a Temporal server restart mid-crawl', () => {
  it('rejects no in-flight function: the crawl ends as an undisturbed one does', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-restart-'));
    const port = await freePort();
    const serverOptions = { cli: resolveTemporalCli(process.env.REPOST_TEMPORAL_CLI_PATH), port, namespace: 'default', dbFile: path.join(dir, 'temporal.sqlite'), logFile: path.join(dir, 'temporal.log') };
    let server: DevServer = await startDevServer(serverOptions);
    // Scripted LLM responses, each answer taking half a second so functions are in flight.
    const llm = await startScriptedLlmServer(loadLlmScript(DEMO_SCRIPT), { latencyMs: 500 });
    const config = testConfig(llm.url, { temporal: { heartbeatTimeoutSec: 10 } }, path.join(dir, 'data'), server.address);
    const store = new LocalStore(config.dataDir);
    installQuietRuntime();
    const native = await NativeConnection.connect({ address: server.address });
    const workers = await startWorkers({ config, connection: native, store, image: config.sandbox.image, workflowBundle: { code: fs.readFileSync(requireEnv('REPOST_TEST_WORKFLOW_BUNDLE'), 'utf8') } });
    const connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection });
    try {
      const started = await startCrawl({ config, client, store, sources: [{ kind: 'local', path: DEMO_REPO, name: 'textkit' }], runId: 'restart' });
      await waitFor('functions in flight', () => llm.requests.length >= 4, 120_000);
      await server.stop();
      await new Promise((r) => setTimeout(r, 3000));
      server = await startDevServer(serverOptions);
      const summary = await started.result();
      expect(acceptedQualnames(summary.datasetFile)).toEqual(['Interval.merge', 'slugify', 'word_frequencies']);
      expect(summary.rejectedAt.internal).toBe(0);
      expect(summary.rejected).toBe(1);
    } finally {
      await workers.shutdown();
      await native.close();
      await connection.close();
      await llm.close();
      await server.stop();
    }
  });
});
