/**
 * Runs the GitHub source in its own Node process (the Octokit packages are ES modules, which
 * this jest setup cannot load) and prints the result as JSON. Input: one JSON argument.
 */
import { GitHubSource, SnapshotStore, snapshotGitHubRepository, type RepoRef } from '../../../activities/sources';
import { loadConfig, type Config } from '../../../temporal.config';

interface Command {
  baseURL: string;
  dataDir: string;
  op: 'search' | 'snapshot' | 'from-config';
  cap?: number;
  perPage?: number;
  filters?: Record<string, unknown>;
  sample?: { limit: number; seed: number };
  refs?: RepoRef[];
  maxSizeKb?: number;
  maxTarballBytes?: number;
  tarballDeadlineMs?: number;
  retries?: number;
  retryUnitMs?: number;
  /** For `from-config`: the crawl's GitHub settings, over the defaults. */
  crawlGithub?: Partial<Config['crawl']['github']>;
}

async function main(): Promise<void> {
  const cmd = JSON.parse(process.argv[2]!) as Command;
  const logs: string[] = [];
  if (cmd.op === 'from-config') {
    // The wiring the activities use: everything from the typed configuration.
    const config = loadConfig({ env: {}, overrides: { dataDir: cmd.dataDir, github: { baseUrl: cmd.baseURL }, crawl: { github: cmd.crawlGithub ?? {} } } });
    const result = await snapshotGitHubRepository(config, cmd.refs![0]!.id, cmd.refs![0]!.commit ?? undefined, (m) => logs.push(m));
    process.stdout.write(JSON.stringify({ result, logs }));
    return;
  }
  const defaults = loadConfig({ env: {} }).crawl.github;
  const gh = new GitHubSource({
    baseURL: cmd.baseURL,
    searchResultCap: cmd.cap,
    perPage: cmd.perPage,
    searchIntervalMs: 0,
    retryAfterUnitMs: 10,
    retries: cmd.retries ?? 3,
    retryUnitMs: cmd.retryUnitMs,
    log: (m) => logs.push(m),
    maxTarballBytes: cmd.maxTarballBytes ?? defaults.maxTarballMb * 1024 * 1024,
    tarballDeadlineMs: cmd.tarballDeadlineMs ?? defaults.downloadTimeoutSec * 1000,
  });
  if (cmd.op === 'search') {
    const result = await gh.search(cmd.filters ?? {}, cmd.sample ?? { limit: 100, seed: 0 });
    process.stdout.write(JSON.stringify({ ...result, requests: gh.requests, logs }));
    return;
  }
  const store = new SnapshotStore(cmd.dataDir);
  const results = [];
  for (const ref of cmd.refs ?? []) results.push(await gh.snapshot(ref, store, { maxSizeKb: cmd.maxSizeKb }));
  process.stdout.write(JSON.stringify({ results, requests: gh.requests, logs }));
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack ?? err.message}\n`);
  process.exit(1);
});
