/** Keys renamed in this release, and how a configuration object under their old names is read. */
import { deletePath, getPath, setPath } from './key-paths';

/**
 * Keys renamed in this release: the old name (a key or a section) is still read, from the file and
 * from its environment variables, with a warning; the next release drops it. A key that became a
 * group of its own name (a single value that now has one per split, `{ train, eval }`) is read
 * under its old name only while its value is not an object; one old key may give several new ones
 * (`loops.stability.runs`, once for both splits, now one per split).
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
  { from: 'loops.coverageThreshold', to: 'loops.coverageThreshold.train', note: 'a value per split' },
  { from: 'loops.evalCoverageThreshold', to: 'loops.coverageThreshold.eval', note: 'a value per split' },
  { from: 'loops.evalRequiresAstMatch', to: 'loops.requireAstMatch.eval', note: 'a value per split' },
  { from: 'loops.mutation.minScore', to: 'loops.mutation.minScore.train', note: 'a value per split' },
  { from: 'loops.mutation.evalMinScore', to: 'loops.mutation.minScore.eval', note: 'a value per split' },
  { from: 'loops.stability.runs', to: 'loops.stability.runs.train', note: 'a value per split' },
  { from: 'loops.stability.runs', to: 'loops.stability.runs.eval', note: 'a value per split' },
  { from: 'analysis.contextTokenBudget', to: 'analysis.contextTokenBudget.train', note: 'a value per split' },
  { from: 'analysis.contextTokenBudget', to: 'analysis.contextTokenBudget.eval', note: 'a value per split' },
];

/** A key that became a group under its own name (`loops.coverageThreshold` -> `loops.coverageThreshold.train`). */
export function becameGroup(r: { from: string; to: string }): boolean {
  return r.to.startsWith(`${r.from}.`);
}

/** The key's name in this release (a key under an old name, or inside a renamed section, gets its new one). */
export function currentKeyName(keyPath: string): string {
  const r = RENAMED_KEYS.find((k) => keyPath === k.from || (!becameGroup(k) && keyPath.startsWith(`${k.from}.`)));
  return r ? r.to + keyPath.slice(r.from.length) : keyPath;
}

/** The value under a renamed key's old name, if it is one (a group's new form, an object, is not). */
function oldValue(raw: Record<string, unknown>, r: { from: string; to: string }): unknown {
  const value = getPath(raw, r.from);
  if (becameGroup(r) && value !== null && typeof value === 'object' && !Array.isArray(value)) return undefined;
  return value;
}

/**
 * Moves keys given under their old names (`RENAMED_KEYS`) to their new ones in a configuration
 * object (a file's, or a run's frozen settings), converting units where they changed; a key given
 * under both names keeps the new one. `warn` hears of each old name found. Every old value is read
 * before any is moved, so an old key that gives several new ones gives each the same value.
 */
export function migrateRenamedKeys(raw: Record<string, unknown>, warn: (oldPath: string, newPath: string, note?: string) => void = () => undefined): Record<string, unknown> {
  const out = structuredClone(raw);
  const found = RENAMED_KEYS.map((r) => ({ r, value: oldValue(out, r) })).filter((f) => f.value !== undefined);
  for (const { r } of found) deletePath(out, r.from);
  for (const { r, value } of found) {
    warn(r.from, r.to, r.note);
    if (getPath(out, r.to) === undefined) setPath(out, r.to, r.convert ? r.convert(value) : value);
  }
  return out;
}
