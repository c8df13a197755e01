/**
 * The loader: defaults (under them a selection preset's layer), then an optional JSON file
 * (`REPOST_CONFIG`), then environment variables, then explicit overrides (CLI flags, tests). Keys
 * under their old names (`RENAMED_KEYS`) are read with a warning, file keys and variables both. A
 * bad value fails at start with a message naming the key and the variable it came from.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { presetConfigLayer } from '../analysis/presets';
import { coerce, configKeys, ENV_ALIASES, envNameFor, type ConfigKey } from './environment';
import { deepMerge, getPath, setPath, type DeepPartial } from './key-paths';
import { migrateRenamedKeys, RENAMED_KEYS } from './renamed-keys';
import { ConfigSchema, type Config } from './schema';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  overrides?: DeepPartial<Config>;
  /** Where a warning goes (an old key name in use); default: standard error. */
  warn?: (message: string) => void;
}

export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const warn = options.warn ?? ((message: string) => console.warn(`warning: ${message}`));
  const sources = new Map<string, string>();
  let raw: Record<string, unknown> = {};

  if (env.REPOST_CONFIG) {
    try {
      raw = JSON.parse(fs.readFileSync(env.REPOST_CONFIG, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(`REPOST_CONFIG=${env.REPOST_CONFIG}: cannot read a JSON object (${(err as Error).message})`);
    }
    raw = migrateRenamedKeys(raw, (from, to, note) => warn(`${env.REPOST_CONFIG}: ${from} is now ${to}${note ? ` (${note})` : ''}; the old name is read until the next release`));
  }

  // A selection preset (`analysis.preset`, from the overrides, the environment or the file) lies
  // under everything the user gave: its crawl filters are the defaults, so a value set explicitly,
  // or a key set beside them, keeps the preset's others.
  const preset = options.overrides?.analysis?.preset ?? (env[envNameFor('analysis.preset')] || undefined) ?? getPath(raw, 'analysis.preset');
  const presetLayer = presetConfigLayer(preset === 'repost' ? preset : undefined);
  raw = deepMerge(presetLayer, raw);
  const defaults = ConfigSchema.parse(presetLayer);

  const keys = configKeys();
  const envKeys = new Map<string, ConfigKey>();
  for (const k of keys) envKeys.set(k.env, k);
  for (const [name, p] of Object.entries(ENV_ALIASES)) envKeys.set(name, keys.find((k) => k.path === p)!);
  // Old variable names of renamed keys: read when the new one is not set.
  for (const r of RENAMED_KEYS) {
    for (const k of keys.filter((key) => key.path === r.to || key.path.startsWith(`${r.to}.`))) {
      const oldName = envNameFor(r.from + k.path.slice(r.to.length));
      if (oldName === k.env || env[oldName] === undefined || env[oldName] === '') continue;
      if (env[k.env] !== undefined && env[k.env] !== '') continue;
      warn(`${oldName} is now ${k.env}${r.note ? ` (${r.note})` : ''}; the old name is read until the next release`);
      const value = coerce(env[oldName]!, k.type);
      setPath(raw, k.path, r.convert ? r.convert(value) : value, defaults);
      sources.set(k.path, oldName);
    }
  }
  for (const [name, key] of envKeys) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    setPath(raw, key.path, coerce(value, key.type), defaults);
    sources.set(key.path, name);
  }
  if (options.overrides) raw = deepMerge(raw, options.overrides as Record<string, unknown>);

  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const keyPath = issue.path.join('.');
      const from = sources.get(keyPath) ?? sources.get(issue.path.slice(0, 2).join('.'));
      return `  ${keyPath}${from ? ` (from ${from})` : ''}: ${issue.message}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const config = parsed.data;
  config.dataDir = path.resolve(config.dataDir);
  return config;
}

