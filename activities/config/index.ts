/**
 * The configuration (the top-level temporal.config.ts re-exports all of it): the schema, one
 * section a file (sections/), the environment mapping (environment.ts), renamed keys
 * (renamed-keys.ts) and the loader (loader.ts).
 */
export { ConfigSchema, type Config } from './schema';
export { ENV_ALIASES, envNameFor, configKeys, processOnlyPaths, type ConfigKey } from './environment';
export { RENAMED_KEYS, currentKeyName, migrateRenamedKeys } from './renamed-keys';
export { deepMerge, type DeepPartial } from './key-paths';
export { ConfigError, loadConfig, type LoadConfigOptions } from './loader';
export { dataPaths } from './data-paths';
