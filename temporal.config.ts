/**
 * The one typed configuration of the factory: defaults, then an optional JSON file
 * (`REPOST_CONFIG`), then environment variables, then explicit overrides (CLI flags, tests).
 *
 * Every key of the schema has an environment variable derived from its path, read from the
 * schema itself (so a new key cannot lack one): `sandbox.memoryMb` -> `REPOST_SANDBOX_MEMORY_MB`,
 * `loops.debugRounds` -> `REPOST_LOOPS_DEBUG_ROUNDS`. The usual names of the ecosystem are honoured
 * too (`TEMPORAL_ADDRESS`, `OPENAI_BASE_URL`, ...). A bad value fails at start with a message
 * naming the key and the variable it came from.
 *
 * Naming: durations are in seconds (`...Sec`), addresses of HTTP services are `...Url`. A key marked
 * `perProcess` belongs to the process that reads it (where things are, credentials, concurrency);
 * every other key is a run setting, frozen into a run when it starts (activities/run-settings.ts).
 * Keys renamed in this release (`RENAMED_KEYS`) are still read under their old names, file keys and
 * environment variables both, with a warning.
 *
 * Where each part is (activities/config/):
 *   schema.ts             the sections put together, and the `Config` type
 *   sections/store.ts     store: the local data directory or a PostgreSQL database
 *   sections/temporal.ts  temporal: the frontend, the embedded dev server, timeouts, task queues
 *   sections/workers.ts   workers: what one worker process runs at once
 *   sections/llm.ts       llm: endpoint, models per step, live or batch, sampling, limits, cache, prices
 *   sections/sandbox.ts   sandbox: container limits, third-party packages, the warm pool
 *   sections/loops.ts     loops: rounds and thresholds, test strength, solvability, sanity checks
 *   sections/analysis.ts  analysis: candidate filters and context limits
 *   sections/crawl.ts     crawl: samples, windows, RepoST's GitHub search filters and split windows
 *   sections/github.ts    github: where GitHub is, and its token
 *   environment.ts        the variable of every key, the ecosystem's names, reading a variable
 *   renamed-keys.ts       old key names and what they are now
 *   loader.ts             the layers put together and validated (`loadConfig`)
 * Every key, its default and its variable: docs/config-reference.md.
 */
export * from './activities/config';
