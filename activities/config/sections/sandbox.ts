/** The `sandbox` section of the configuration. The containers that run the scripts: limits, third-party packages, the warm pool. */
import { z } from 'zod';
import { PER_PROCESS, nonNegativeInt, positiveInt } from '../shapes';

export const SandboxSection = z
  .object({
    /** Image reference; unset = the locally built `repost-sandbox:<inputs-hash>`. */
    image: z.string().min(1).optional().meta(PER_PROCESS),
    /** Memory of one run's container (no swap), MiB. */
    memoryMb: positiveInt.default(2048),
    /** CPUs of one run's container. */
    cpus: z.number().positive().default(1),
    /** Processes one run's container may hold. */
    pidsLimit: positiveInt.default(256),
    /** Wall-clock limit of one run, enforced inside the container too. */
    timeoutSec: positiveInt.default(120),
    /** Bytes of stdout and of stderr kept per run (head and tail). */
    outputLimitBytes: positiveInt.default(64 * 1024),
    /** Size of each tmpfs scratch folder of a run, MiB. */
    scratchMb: positiveInt.default(256),
    /** How often a sandbox worker sweeps leftover containers (by label and age, whatever their worker). */
    sweepIntervalSec: positiveInt.default(300).meta(PER_PROCESS),
    /** Third-party packages: resolved and downloaded by uv on the host, wheels only, run offline. */
    packages: z
      .object({
        /** Wall-clock limit of one install: resolution, downloads and source builds together. */
        installTimeoutSec: positiveInt.default(600),
        /** Resolutions per script: the first (every import at once), then one per import only a run revealed or per dropped package. */
        resolutionRounds: positiveInt.default(3),
        /** Build distributions that publish no wheel for the sandbox from source, in an offline sandbox container. */
        buildFromSource: z.boolean().default(true),
        /** The package index (default: PyPI, or UV_DEFAULT_INDEX / UV_INDEX_URL / PIP_INDEX_URL). */
        indexUrl: z.string().url().optional().meta(PER_PROCESS),
        /** Local folders of wheels or source archives searched besides the index. */
        findLinks: z.array(z.string().min(1)).default([]).meta(PER_PROCESS),
        /**
         * A script's packages are resolved as of its code's commit date plus this long (uv's
         * `--exclude-newer`): the releases its repository's users had, and fixes released soon
         * after. A package with no installable release by then takes its newest; code without a
         * date (a folder pinned by its tree's hash) gets the newest releases.
         */
        asOfGraceSec: nonNegativeInt.default(30 * 24 * 3600),
        /** How long a permanent install failure (no wheel, unknown name, conflict, failed build) is remembered; transient ones never are. */
        failureMemorySec: nonNegativeInt.default(3600),
        /** The uv binary; unset = the one scripts/bootstrap.sh installs in .tools/uv, else `uv` on PATH. */
        uvPath: z.string().min(1).optional().meta(PER_PROCESS),
        /** uv's cache (every downloaded wheel, once per machine); unset = `<dataDir>/packages/uv-cache`. Same file system as the store, for hard links. */
        uvCacheDir: z.string().min(1).optional().meta(PER_PROCESS),
      })
      .prefault({}),
    /** The warm container pool: runs reuse cleaned containers (false: a fresh container per run). */
    pool: z
      .object({
        enabled: z.boolean().default(true),
        size: positiveInt.default(2),
        recycleAfterRuns: positiveInt.default(50),
        /** A pool container is replaced once this old, so no live container outlives the leftover sweep's age. */
        maxAgeSec: positiveInt.default(1800),
      })
      .prefault({})
      .meta(PER_PROCESS),
  })
  .prefault({});
