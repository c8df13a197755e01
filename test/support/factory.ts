/**
 * A complete factory for one integration suite, on the real components: the shared Temporal dev
 * server (global setup), workers with their own task queues, the real sandbox image and Docker,
 * and a scripted OpenAI-compatible server reached through the real `openai` client over HTTP.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { installQuietRuntime, startWorkers, type RunningWorkers } from '../../workers/main';
import { loadConfig, type Config, type DeepPartial } from '../../temporal.config';
import { startScriptedLlmServer, type LlmScript, type ScriptedLlmServer } from '../../scripts/lib/scripted-llm-server';
import { LocalStore } from '../../activities/store/local';
import type { Store } from '../../activities/store/types';

export interface TestFactory {
  config: Config;
  client: Client;
  /** The store the workers use (the local data directory of this factory). */
  store: Store;
  llm: ScriptedLlmServer;
  dataDir: string;
  close(): Promise<void>;
}

export function requireEnv(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: integration tests run under jest's global setup (npm test)`);
  return v;
}

export async function startTestFactory(script: LlmScript, overrides: DeepPartial<Config> = {}, dataDir?: string): Promise<TestFactory> {
  const address = requireEnv('REPOST_TEST_TEMPORAL_ADDRESS');
  const dir = dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'repost-it-'));
  const llm = await startScriptedLlmServer(script);
  const suffix = randomBytes(4).toString('hex');
  const config = loadConfig({
    env: {},
    overrides: {
      ...overrides,
      dataDir: dir,
      temporal: {
        address,
        taskQueues: { workflows: `wf-${suffix}`, io: `io-${suffix}`, llm: `llm-${suffix}`, sandbox: `sb-${suffix}` },
      },
      llm: { baseURL: llm.url, apiKey: 'scripted', model: 'scripted-test', ...(overrides.llm ?? {}) },
      sandbox: { image: requireEnv('REPOST_TEST_SANDBOX_IMAGE'), ...(overrides.sandbox ?? {}) },
    },
  });
  installQuietRuntime();
  const store = new LocalStore(config.dataDir);
  const native = await NativeConnection.connect({ address });
  const workers: RunningWorkers = await startWorkers({
    config,
    connection: native,
    store,
    image: config.sandbox.image,
    workflowBundle: { code: fs.readFileSync(requireEnv('REPOST_TEST_WORKFLOW_BUNDLE'), 'utf8') },
  });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  return {
    config,
    client,
    store,
    llm,
    dataDir: dir,
    async close() {
      await workers.shutdown();
      await native.close();
      await connection.close();
      await llm.close();
    },
  };
}
