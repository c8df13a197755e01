/**
 * Just enough of PEP 440 to pick a source distribution by version: parse a version from an sdist
 * file name, order versions, and test a requirement's specifier (`>=1.2,<2`, `==1.4.*`, `~=2.1`).
 * Resolution proper is uv's job; this only chooses which archive to build when uv found no wheel.
 */
export interface Version {
  text: string;
  release: number[];
  /** Pre-releases and dev releases sort before their release. */
  pre: boolean;
  post: number;
}

const VERSION = /^v?(?:\d+!)?(\d+(?:\.\d+)*)((?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview|dev)[-_.]?\d*)*)((?:[-_.]?(?:post|rev|r)[-_.]?\d*)?)(?:\+[a-z0-9.]+)?$/i;

export function parseVersion(text: string): Version | null {
  const m = VERSION.exec(text.trim());
  if (!m) return null;
  return { text, release: m[1]!.split('.').map(Number), pre: m[2] !== '', post: m[3] ? Number(/\d+/.exec(m[3])?.[0] ?? 0) : -1 };
}

function compareRelease(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

export function compareVersions(a: Version, b: Version): number {
  const r = compareRelease(a.release, b.release);
  if (r !== 0) return r;
  if (a.pre !== b.pre) return a.pre ? -1 : 1;
  return Math.sign(a.post - b.post);
}

function satisfiesClause(v: Version, clause: string): boolean {
  const m = /^(===|==|~=|!=|>=|<=|<|>)\s*(.+)$/.exec(clause.trim());
  if (!m) return true;
  const [, op, rawTarget] = m;
  if (op === '===') return v.text === rawTarget;
  const wildcard = rawTarget!.endsWith('.*');
  const target = parseVersion(wildcard ? rawTarget!.slice(0, -2) : rawTarget!);
  if (!target) return true;
  if (wildcard && (op === '==' || op === '!=')) {
    const prefix = target.release.every((n, i) => v.release[i] === n);
    return op === '==' ? prefix : !prefix;
  }
  const c = compareVersions(v, target);
  switch (op) {
    case '==':
      return c === 0;
    case '!=':
      return c !== 0;
    case '>=':
      return c >= 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '<':
      return c < 0;
    case '~=': {
      const upper = target.release.slice(0, Math.max(1, target.release.length - 1));
      return c >= 0 && upper.every((n, i) => v.release[i] === n);
    }
    default:
      return true;
  }
}

/** `>=1.2,<2` (empty: anything). Pre-releases only when the specifier names one. */
export function satisfies(v: Version, specifier: string): boolean {
  const clauses = specifier.split(',').filter((c) => c.trim() !== '');
  if (v.pre && !clauses.some((c) => /\d(?:a|b|rc|dev)/i.test(c))) return false;
  return clauses.every((c) => satisfiesClause(v, c));
}

/** `name-1.2.3.tar.gz` -> name and version; old sdists may have dashes in the name. */
export function parseSdistFilename(filename: string): { name: string; version: Version } | null {
  const m = /^(.+)-([0-9][^-]*)\.(?:tar\.gz|zip|tar\.bz2|tgz)$/i.exec(filename);
  if (!m) return null;
  const version = parseVersion(m[2]!);
  return version ? { name: m[1]!, version } : null;
}

/** PEP 440's version pattern (as the `packaging` library spells it), case-insensitive. */
const CANONICAL =
  /^\s*v?(?:(\d+)!)?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d+)?)?(?:-(\d+)|[-_.]?(post|rev|r)[-_.]?(\d+)?)?(?:[-_.]?(dev)[-_.]?(\d+)?)?(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$/i;

const PRE_LABELS: Record<string, string> = { a: 'a', alpha: 'a', b: 'b', beta: 'b', c: 'rc', rc: 'rc', pre: 'rc', preview: 'rc' };

/**
 * The normalised form of a version (`1.0.0-Alpha.1` -> `1a1`, `2.0-post` -> `2.post0`, trailing
 * zeros of the release dropped), so two spellings of one version compare equal; null when the
 * text is not a PEP 440 version.
 */
export function canonicalVersion(text: string): string | null {
  const m = CANONICAL.exec(text);
  if (!m) return null;
  const [, epoch, release, preLabel, preNumber, postImplicit, postLabel, postNumber, dev, devNumber, local] = m;
  const parts = release!.split('.').map((n) => String(Number(n)));
  while (parts.length > 1 && parts[parts.length - 1] === '0') parts.pop();
  let out = (epoch && Number(epoch) !== 0 ? `${Number(epoch)}!` : '') + parts.join('.');
  if (preLabel) out += PRE_LABELS[preLabel.toLowerCase()]! + String(Number(preNumber ?? 0));
  if (postImplicit !== undefined) out += `.post${Number(postImplicit)}`;
  else if (postLabel) out += `.post${Number(postNumber ?? 0)}`;
  if (dev) out += `.dev${Number(devNumber ?? 0)}`;
  if (local) out += `+${local.toLowerCase().replace(/[-_]/g, '.')}`;
  return out;
}

/** Whether two version texts name the same version (PEP 440 normalisation). */
export function sameVersion(a: string, b: string): boolean {
  const x = canonicalVersion(a);
  return x !== null && x === canonicalVersion(b);
}
