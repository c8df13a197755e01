/**
 * A Docker daemon restart in the middle of a crawl. The sandbox worker (its own process) talks to
 * a private daemon of this test (DOCKER_HOST); the daemon is stopped while scripts run and started
 * again a few seconds later. No function is rejected for it: the sandbox activities fail as
 * infrastructure, Temporal retries them, and once the daemon is back the crawl ends as an
 * undisturbed one does.
 */
import { Client, Connection } from '@temporalio/client';
import * as path from 'node:path';
import { LocalStore } from '../../activities/store/local';
import { startCrawl } from '../../scripts/lib/crawl';
import { loadLlmScript, startScriptedLlmServer } from '../../scripts/scripted-llm/server';
import { acceptedQualnames } from '../support/fixtures';
import { requireEnv, testConfig, workerEnv } from '../support/factory';
import { PrivateDockerDaemon } from '../support/private-docker';
import { spawnWorker, waitFor } from '../support/processes';

const DEMO_REPO = path.resolve(__dirname, '../../scripts/demo/example-repo');
const DEMO_SCRIPT = path.resolve(__dirname, '../../scripts/demo/scripted-llm-responses.json');

describe('a Docker daemon restart mid-crawl', () => {
  it('rejects no in-flight function: the crawl ends as an undisturbed one does', async () => {
    const daemon = new PrivateDockerDaemon();
    await daemon.start();
    daemon.loadImage(requireEnv('REPOST_TEST_SANDBOX_IMAGE'));
    // Scripted LLM responses, quick, so the restart falls on the scripts' runs.
    const llm = await startScriptedLlmServer(loadLlmScript(DEMO_SCRIPT), { latencyMs: 200 });
    const config = testConfig(llm.url, { temporal: { heartbeatTimeoutSec: 10 } });
    const worker = spawnWorker({ ...workerEnv(config), DOCKER_HOST: daemon.host });
    const connection = await Connection.connect({ address: requireEnv('REPOST_TEST_TEMPORAL_ADDRESS') });
    try {
      await worker.ready;
      const store = new LocalStore(config.dataDir);
      const started = await startCrawl({ config, client: new Client({ connection }), store, sources: [{ kind: 'local', path: DEMO_REPO, name: 'textkit' }], runId: `docker-restart-${Date.now().toString(36)}` });
      // Once test scripts are being written, executions follow: stop the daemon under them.
      await waitFor('the first tests to be written', () => llm.requests.some((r) => r.kind === 'tests'), 120_000);
      await daemon.stop();
      await new Promise((r) => setTimeout(r, 8000));
      await daemon.start();
      const summary = await started.result();
      expect(acceptedQualnames(summary.datasetFile)).toEqual(['Interval.merge', 'slugify', 'word_frequencies']);
      expect(summary.rejectedAt).toMatchObject({ execute: 0, debug: 0, internal: 0, test_check: 1 });
      // The restart did hit container work: some sandbox activity needed more than one attempt.
      let retried = 0;
      const client = new Client({ connection });
      for await (const wf of client.workflow.list({ query: `RepostRunId = "${summary.runId}" AND WorkflowType = "functionWorkflow"` })) {
        const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
        retried += (history.events ?? []).filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1).length;
      }
      expect(retried).toBeGreaterThan(0);
    } finally {
      await worker.stop();
      await connection.close();
      await llm.close();
      await daemon.dispose();
    }
  });
});
