/**
 * The sources as the rest of the factory uses them: built from the typed configuration
 * (github.baseUrl/token, the crawl's GitHub filters, windows and download limits, snapshots under
 * the data directory).
 */
import type { Config } from '../../temporal.config';
import { dataPaths } from '../../temporal.config';
import { GitHubSource } from './github';
import { SnapshotStore, type SnapshotLimits } from './snapshot';
import type { CrawlFilters, RepoRef, SnapshotResult } from './types';

const MiB = 1024 * 1024;

/** A repository's download and snapshot limits (`crawl.github.maxTarballMb`; the tree unpacked at most four times it). */
export function snapshotLimitsFromConfig(config: Pick<Config, 'crawl'>): SnapshotLimits {
  const maxTarballBytes = config.crawl.github.maxTarballMb * MiB;
  return { maxTarballBytes, maxTreeBytes: 4 * maxTarballBytes };
}

export function gitHubSourceFromConfig(config: Pick<Config, 'github' | 'crawl'>, log?: (message: string) => void): GitHubSource {
  return new GitHubSource({
    baseURL: config.github.baseUrl,
    token: config.github.token,
    log,
    maxTarballBytes: snapshotLimitsFromConfig(config).maxTarballBytes,
    tarballDeadlineMs: config.crawl.github.downloadTimeoutSec * 1000,
  });
}

export function snapshotStoreFromConfig(config: Pick<Config, 'dataDir'>): SnapshotStore {
  return new SnapshotStore(dataPaths(config).snapshots);
}

/** The RepoST crawl filters for one split, from the crawl section of the configuration. */
export function crawlFiltersFromConfig(config: Pick<Config, 'crawl'>, split: 'train' | 'eval'): CrawlFilters {
  const filters = config.crawl.github;
  const window = split === 'train' ? filters.trainWindow : filters.evalWindow;
  return {
    language: 'Python',
    licenses: filters.licenses,
    includeForks: false,
    maxSizeKb: filters.maxRepoSizeKb,
    minStars: filters.minStars,
    createdFrom: window.from,
    createdTo: window.to,
    includeArchived: filters.includeArchived,
  };
}

/** Pin and snapshot one GitHub repository ('owner/name', optionally at a commit). */
export async function snapshotGitHubRepository(
  config: Pick<Config, 'github' | 'dataDir' | 'crawl'>,
  fullName: string,
  commit?: string,
  log?: (message: string) => void,
): Promise<SnapshotResult> {
  const [owner, name] = fullName.split('/');
  const ref: RepoRef = { id: fullName, owner: owner ?? null, name: name ?? fullName, commit: commit ?? null, createdAt: null, license: null, stars: null, sizeKb: null, defaultBranch: null };
  return gitHubSourceFromConfig(config, log).snapshot(ref, snapshotStoreFromConfig(config), { maxSizeKb: config.crawl.github.maxRepoSizeKb, limits: snapshotLimitsFromConfig(config) });
}
