/** Keys renamed in this release, and how a configuration object under their old names is read. */
import { deletePath, getPath, setPath } from './key-paths';

/**
 * Keys renamed in this release: the old name (a key or a section) is still read, from the file and
 * from its environment variables, with a warning; the next release drops it.
 */
export const RENAMED_KEYS: readonly { from: string; to: string; convert?: (value: unknown) => unknown; note?: string }[] = [
  { from: 'llm.baseURL', to: 'llm.baseUrl' },
  { from: 'llm.timeoutMs', to: 'llm.timeoutSec', convert: (v) => (typeof v === 'number' ? Math.ceil(v / 1000) : v), note: 'in seconds' },
  { from: 'github.baseURL', to: 'github.baseUrl' },
  { from: 'crawl.licenses', to: 'crawl.github.licenses' },
  { from: 'crawl.maxRepoSizeKb', to: 'crawl.github.maxRepoSizeKb' },
  { from: 'crawl.minStars', to: 'crawl.github.minStars' },
  { from: 'crawl.trainWindow', to: 'crawl.github.trainWindow' },
  { from: 'crawl.evalWindow', to: 'crawl.github.evalWindow' },
];

/** The key's name in this release (a key under an old name, or inside a renamed section, gets its new one). */
export function currentKeyName(keyPath: string): string {
  const r = RENAMED_KEYS.find((k) => keyPath === k.from || keyPath.startsWith(`${k.from}.`));
  return r ? r.to + keyPath.slice(r.from.length) : keyPath;
}

/**
 * Moves keys given under their old names (`RENAMED_KEYS`) to their new ones in a configuration
 * object (a file's, or a run's frozen settings), converting units where they changed; a key given
 * under both names keeps the new one. `warn` hears of each old name found.
 */
export function migrateRenamedKeys(raw: Record<string, unknown>, warn: (oldPath: string, newPath: string, note?: string) => void = () => undefined): Record<string, unknown> {
  const out = structuredClone(raw);
  for (const r of RENAMED_KEYS) {
    const value = getPath(out, r.from);
    if (value === undefined) continue;
    warn(r.from, r.to, r.note);
    deletePath(out, r.from);
    if (getPath(out, r.to) === undefined) setPath(out, r.to, r.convert ? r.convert(value) : value);
  }
  return out;
}
