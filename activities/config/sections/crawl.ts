/** The `crawl` section of the configuration. What a crawl samples, how many children run at once, and RepoST's GitHub search filters and split windows. */
import { z } from 'zod';
import { isoDate, nonNegativeInt, positiveInt } from '../shapes';

export const CrawlSection = z
  .object({
    /** Candidate functions sampled per repository (seeded by `crawl.seed`); under `--preset repost`, a value you set caps RepoST's sample. */
    maxFunctionsPerRepo: positiveInt.default(30),
    /** What a crawl makes environments of: functions (RepoST), `both` functions and classes, or `classes` only (start.ts --classes, --classes-only). */
    targets: z.enum(['functions', 'both', 'classes']).default('functions'),
    /** Class environments sampled per repository (seeded, like the functions) when classes are made. */
    maxClassesPerRepo: positiveInt.default(10),
    /** Seed of the per-repository samples of functions and classes. */
    seed: z.number().int().default(0),
    /** Children running at once per repository workflow (sliding window). */
    functionWindow: positiveInt.default(8),
    /** Repository workflows running at once per crawl (sliding window). */
    repoWindow: positiveInt.default(4),
    /** Continue-as-new after this many finished children, to keep histories small. */
    continueAsNewAfter: positiveInt.default(200),
    /**
     * Local folders must state one of `crawl.github.licenses` in their license file (a folder
     * without one, or with another license, is skipped with the reason). Off: local folders are
     * crawled whatever their license, which is still detected and recorded. Not a search filter,
     * so not under `github`; the list is the one the GitHub search asks for, so every source of a
     * run is held to the same licenses.
     */
    checkLocalLicenses: z.boolean().default(false),
    /**
     * RepoST's GitHub search filters, the creation-date windows that decide a GitHub
     * repository's split, and the limits of one repository's download.
     */
    github: z
      .object({
        /** Licenses (GitHub keys) the search asks for; with `checkLocalLicenses`, the ones a local folder must state. */
        licenses: z.array(z.string().min(1)).default(['mit']),
        /** The largest repository the GitHub search asks for (GitHub's size, KB). */
        maxRepoSizeKb: positiveInt.default(10 * 1024),
        /** The fewest stars a repository found by the GitHub search has. */
        minStars: nonNegativeInt.default(0),
        /** Include archived repositories in the search (RepoST's search does). */
        includeArchived: z.boolean().default(false),
        /** The largest tarball downloaded (MiB): a larger one is refused as it arrives; unpacked, its tree may take four times this. */
        maxTarballMb: positiveInt.default(100),
        /** One tarball download's deadline: every attempt, every wait between attempts, every redirect and byte. */
        downloadTimeoutSec: positiveInt.default(600),
        /** Creation dates (`from`, `to`, YYYY-MM-DD) of the training split's repositories: the search window of `--github train`, and the split of a listed GitHub repository. */
        trainWindow: z.object({ from: isoDate, to: isoDate }).default({ from: '2023-01-31', to: '2024-08-31' }),
        /** The same for the evaluation split (`--github eval`). */
        evalWindow: z.object({ from: isoDate, to: isoDate }).default({ from: '2024-09-01', to: '2026-12-31' }),
      })
      .prefault({}),
  })
  .prefault({});
