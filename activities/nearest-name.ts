/**
 * The valid name closest to a mistyped one, for messages that refuse an unknown name
 * (`--stage test-check`: did you mean test_check?). Closeness is the edit distance (insertions,
 * deletions, substitutions), with `-`/`_` and case ignored.
 */

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    previous = current;
  }
  return previous[b.length]!;
}

const plain = (s: string) => s.toLowerCase().replace(/-/g, '_');

/** The nearest of `names` to `name`, or null when none is near (more than a third of it differs). */
export function nearestName(name: string, names: readonly string[]): string | null {
  let best: { name: string; d: number } | null = null;
  for (const candidate of names) {
    const d = editDistance(plain(name), plain(candidate));
    if (!best || d < best.d) best = { name: candidate, d };
  }
  return best && best.d <= Math.max(2, Math.ceil(name.length / 3)) ? best.name : null;
}

/** `unknown <what> "x"; did you mean y?` or the list of valid names when none is near. */
export function unknownNameMessage(what: string, name: string, names: readonly string[]): string {
  const near = nearestName(name, names);
  return near ? `unknown ${what} "${name}"; did you mean ${near}?` : `unknown ${what} "${name}"; one of: ${names.join(', ')}`;
}
