/** Shared setup for the LLM tests: a temporary data directory, a config pointing at a scripted server. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig, type Config, type DeepPartial } from '../../../temporal.config';
import { LocalStore } from '../../../activities/store/local';

export function tempDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'repost-llm-'));
}

export function testConfig(baseURL: string, dataDir: string, overrides: DeepPartial<Config> = {}): Config {
  const llm = (overrides.llm ?? {}) as DeepPartial<Config['llm']>;
  return loadConfig({
    env: {},
    overrides: { ...overrides, dataDir, llm: { baseUrl: baseURL, apiKey: 'test-key', model: 'gpt-4o', timeoutSec: 5, ...llm } },
  });
}

export function storeFor(config: Config): LocalStore {
  return new LocalStore(config.dataDir);
}
