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
import { installQuietRuntime, startWorkers, type RunningWorkers } from '../../scripts/lib/workers';
import { loadConfig, type Config, type DeepPartial } from '../../temporal.config';
import { startScriptedLlmServer, type LlmScript, type ScriptedLlmServer, type ScriptedServerOptions } from '../../scripts/scripted-llm/server';
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

/**
 * A configuration for one test: its own data directory and task queues, the test's Temporal
 * server (or `address`), the scripted LLM endpoint and the test sandbox image.
 */
export function testConfig(llmUrl: string, overrides: DeepPartial<Config> = {}, dataDir?: string, address = requireEnv('REPOST_TEST_TEMPORAL_ADDRESS')): Config {
  const dir = dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'repost-it-'));
  const suffix = randomBytes(4).toString('hex');
  return loadConfig({
    env: {},
    overrides: {
      ...overrides,
      dataDir: dir,
      temporal: {
        ...(overrides.temporal ?? {}),
        address,
        taskQueues: { workflows: `wf-${suffix}`, io: `io-${suffix}`, llm: `llm-${suffix}`, sandbox: `sb-${suffix}` },
      },
      llm: { baseUrl: llmUrl, apiKey: 'scripted', model: 'scripted-test', ...(overrides.llm ?? {}) },
      sandbox: { image: requireEnv('REPOST_TEST_SANDBOX_IMAGE'), ...(overrides.sandbox ?? {}) },
    },
  });
}

/** The environment a worker process (`workers/main.ts`) needs to serve a test configuration. */
export function workerEnv(config: Config): NodeJS.ProcessEnv {
  const q = config.temporal.taskQueues;
  return {
    TEMPORAL_ADDRESS: config.temporal.address,
    REPOST_DATA_DIR: config.dataDir,
    REPOST_TEMPORAL_TASK_QUEUES_WORKFLOWS: q.workflows,
    REPOST_TEMPORAL_TASK_QUEUES_IO: q.io,
    REPOST_TEMPORAL_TASK_QUEUES_LLM: q.llm,
    REPOST_TEMPORAL_TASK_QUEUES_SANDBOX: q.sandbox,
    OPENAI_BASE_URL: config.llm.baseUrl,
    OPENAI_API_KEY: config.llm.apiKey,
    OPENAI_MODEL: config.llm.model,
    REPOST_SANDBOX_IMAGE: config.sandbox.image,
    ...(config.store.url ? { REPOST_STORE_URL: config.store.url } : {}),
  };
}

export async function startTestFactory(script: LlmScript, overrides: DeepPartial<Config> = {}, dataDir?: string, llmOptions: ScriptedServerOptions = {}): Promise<TestFactory> {
  const address = requireEnv('REPOST_TEST_TEMPORAL_ADDRESS');
  const llm = await startScriptedLlmServer(script, llmOptions);
  const config = testConfig(llm.url, overrides, dataDir, address);
  const dir = config.dataDir;
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
