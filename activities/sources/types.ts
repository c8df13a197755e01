/** Shapes shared by the repository sources: a reference to a repository, a snapshot of it, a skip. */
import { z } from 'zod';
import type { Snapshot } from '../store/snapshots';

/** A repository to process, pinned to a commit once resolved. */
export interface RepoRef {
  /** 'owner/name' for GitHub repositories, 'local/<folder>' for local folders. */
  id: string;
  owner: string | null;
  name: string;
  /** Commit SHA (GitHub) or content hash (local folder); null until pinned. */
  commit: string | null;
  /** When the pinned commit was made (ISO 8601, its committer date); null when unknown, absent until pinned. */
  commitDate?: string | null;
  /** ISO timestamp of the repository's creation (decides the train/eval split). */
  createdAt: string | null;
  license: string | null;
  stars: number | null;
  sizeKb: number | null;
  defaultBranch: string | null;
  /** Set for local folders: the folder itself is the tree. */
  localPath?: string;
}

/** An extracted tree on disk (the store's snapshot folders). */
export type { Snapshot };

export type SourceStage = 'search' | 'resolve' | 'fetch' | 'extract';

/** A repository that could not be used, with the reason; a crawl records it and goes on. */
export interface SourceSkip {
  repoId: string;
  stage: SourceStage;
  reason: string;
}

export type SnapshotResult = { ok: true; snapshot: Snapshot; ref: RepoRef } | { ok: false; skip: SourceSkip };

export const IsoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected YYYY-MM-DD');

/** RepoST's crawl filters; defaults follow the paper and the project configuration. */
export const CrawlFiltersSchema = z.object({
  language: z.string().min(1).default('Python'),
  licenses: z.array(z.string().min(1)).min(1).default(['mit']),
  includeForks: z.boolean().default(false),
  maxSizeKb: z.number().int().positive().default(10 * 1024),
  minStars: z.number().int().nonnegative().default(0),
  createdFrom: IsoDate.default('2023-01-31'),
  createdTo: IsoDate.default('2024-08-31'),
  includeArchived: z.boolean().default(false),
});
export type CrawlFilters = z.infer<typeof CrawlFiltersSchema>;
