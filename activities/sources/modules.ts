/**
 * What a repository's own code is imported by: a script that misses one of these names has lost
 * the repository's code, and the name is never installed as a package.
 */

/** The names a script could import the repository's own code by: top-level packages and modules (also under src/). */
export function topLevelModules(paths: Iterable<string>): string[] {
  const names = new Set<string>();
  for (const p of paths) {
    const parts = p.split('/');
    const first = parts[0] === 'src' && parts.length > 1 ? parts[1]! : parts[0]!;
    const name = first.replace(/\.py$/, '');
    if (/^[A-Za-z_]\w*$/.test(name)) names.add(name);
  }
  return [...names].sort();
}
