/** Repository sources: GitHub (search or list), local folders; snapshots; the train/eval split. */
export * from './types';
export { listSource, RepoListError, RepoLineSchema } from './list';
export { localSource, localSnapshot } from './local';
export { SnapshotStore, DEFAULT_LIMITS, type SnapshotLimits } from './snapshot';
export { splitOf, type Split, type DateWindow } from './split';
export { GitHubSource, seededSample, searchQuery, type GitHubSourceOptions } from './github';
export { RepoSourceSchema, SourceError, localRepoId, pinLocalFolder, readSourceList, snapshotLocalFolder, sourceOfLine } from './repo-source';
export { topLevelModules } from './modules';
export { gitHubSourceFromConfig, snapshotLimitsFromConfig, snapshotStoreFromConfig, crawlFiltersFromConfig, snapshotGitHubRepository } from './from-config';
