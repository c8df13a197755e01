/**
 * The license of a repository tree (a local folder, or a tarball's extracted tree) from its license
 * file, for sources whose host says nothing (a local clone, a mirror, a GitHub repository the API
 * reports as "other").
 *
 * No package on npm identifies license texts and is kept up (license-checker's text rules are
 * internal to a dependency auditor last released years ago; askalono and licensee are not npm
 * packages), so the match is done here, documented: the SPDX reference text of each common license
 * comes from `spdx-license-list` (the SPDX License List, kept up to date); a license file matches a
 * license when the Sørensen-Dice coefficient of their sets of normalised words is at least 0.9 and
 * higher than for any other candidate. Normalising lowercases, drops copyright lines, template
 * placeholders, markdown and punctuation, and spells "licence" as "license". The result is a
 * GitHub-style license key (`mit`, `apache-2.0`, `gpl-3.0`, ...), the form `crawl.github.licenses` and the
 * GitHub API use; a GPL text says nothing of "only" or "or later", so none is claimed.
 *
 * The file is untrusted: only regular files (no symlinks) directly in the tree's root, named like a
 * license file, at most 256 KiB, are read; what is recorded is one of the keys below and the file's
 * name (which matched the name pattern), never the file's text.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';

/** Where a record's license came from. */
export type LicenseSource = 'github-api' | `file:${string}` | 'none';

export interface DetectedLicense {
  /** GitHub-style key, or null when unknown. */
  license: string | null;
  source: LicenseSource;
}

/** The licenses told apart: GitHub key -> SPDX id of the reference text. */
export const COMMON_LICENSES: Readonly<Record<string, string>> = {
  mit: 'MIT',
  'apache-2.0': 'Apache-2.0',
  'bsd-2-clause': 'BSD-2-Clause',
  'bsd-3-clause': 'BSD-3-Clause',
  'gpl-2.0': 'GPL-2.0-only',
  'gpl-3.0': 'GPL-3.0-only',
  'lgpl-2.1': 'LGPL-2.1-only',
  'lgpl-3.0': 'LGPL-3.0-only',
  'agpl-3.0': 'AGPL-3.0-only',
  'mpl-2.0': 'MPL-2.0',
  isc: 'ISC',
  unlicense: 'Unlicense',
  '0bsd': '0BSD',
  'bsl-1.0': 'BSL-1.0',
  'cc0-1.0': 'CC0-1.0',
  'epl-2.0': 'EPL-2.0',
  zlib: 'Zlib',
  wtfpl: 'WTFPL',
};

/** Minimum Dice coefficient of a match. */
export const MATCH_THRESHOLD = 0.9;
/** License files larger than this are not read (no license text comes near it). */
export const MAX_LICENSE_FILE_BYTES = 256 * 1024;

/** License file names, most telling first: LICENSE, LICENCE, COPYING, UNLICENSE, with .md/.txt/.rst, and LICENSE-MIT-style suffixes. */
const LICENSE_FILE = /^(un)?licen[cs]es?([-_][a-z0-9-]{1,20})?(\.(md|markdown|txt|rst))?$|^copying(\.(lesser|lib))?(\.(md|txt))?$/i;

export function isLicenseFileName(name: string): boolean {
  return name.length <= 40 && LICENSE_FILE.test(name);
}

/** Words of a license text, normalised for comparison. */
export function licenseWords(text: string): Set<string> {
  const cleaned = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    // Copyright notices name people and years, not terms.
    .filter((l) => !/^\s*(copyright\b|\(c\)|©)/i.test(l.replace(/^[#>*\s-]+/, '')))
    .join('\n')
    .toLowerCase()
    .replace(/<[^>\n]{1,60}>/g, ' ') // SPDX template placeholders such as <year>
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/\blicence/g, 'license')
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, ' ');
  return new Set(cleaned.split(' ').filter((w) => w.length > 0));
}

function dice(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let common = 0;
  for (const w of a) if (b.has(w)) common++;
  return (2 * common) / (a.size + b.size);
}

/**
 * The forms a license file of that license takes: SPDX's LGPL-3.0 text has the GPL-3.0 appended;
 * an LGPL project ships it so, or keeps the LGPL's own terms in a file of their own (COPYING.LESSER
 * beside a COPYING holding the GPL).
 */
function forms(key: string, text: string): string[] {
  if (key !== 'lgpl-3.0') return [text];
  const gpl = text.search(/\nGNU GENERAL PUBLIC LICENSE\s+Version 3/);
  return gpl > 0 ? [text, text.slice(0, gpl)] : [text];
}

let references: { key: string; words: Set<string> }[] | null = null;

function referenceTexts(): { key: string; words: Set<string> }[] {
  if (!references) {
    references = Object.entries(COMMON_LICENSES).flatMap(([key, spdx]) => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const entry = require(`spdx-license-list/licenses/${spdx}.json`) as { licenseText: string };
      return forms(key, entry.licenseText).map((text) => ({ key, words: licenseWords(text) }));
    });
  }
  return references;
}

/** The common license a text is, with its Dice coefficient; null when none reaches the threshold. */
export function matchLicenseText(text: string): { license: string; similarity: number } | null {
  const words = licenseWords(text);
  let best: { license: string; similarity: number } | null = null;
  for (const ref of referenceTexts()) {
    const similarity = dice(words, ref.words);
    if (!best || similarity > best.similarity) best = { license: ref.key, similarity };
  }
  return best && best.similarity >= MATCH_THRESHOLD ? best : null;
}

/**
 * Order of preference among several license files: COPYING.LESSER first (a project that has one
 * is under the LGPL, whatever its COPYING holds), then LICENSE/LICENCE, UNLICENSE, COPYING;
 * plain names before suffixed ones.
 */
function rank(name: string): number {
  const n = name.toLowerCase();
  if (n.startsWith('copying.lesser')) return -1;
  const kind = n.startsWith('licen') ? 0 : n.startsWith('unlicen') ? 1 : 2;
  const plain = /^(licen[cs]e|copying|unlicense)(\.(md|markdown|txt|rst))?$/.test(n) ? 0 : 1;
  return kind * 2 + plain;
}

/** The license stated by the license file at the root of `dir`; `none` when no file states a common license. */
export async function detectLicense(dir: string): Promise<DetectedLicense> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return { license: null, source: 'none' };
  }
  const files = entries
    .filter((e) => e.isFile() && isLicenseFileName(e.name))
    .map((e) => e.name)
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  for (const name of files) {
    const file = path.join(dir, name);
    let handle: fs.FileHandle | null = null;
    try {
      // O_NOFOLLOW: a file swapped for a symlink after the listing is not followed.
      handle = await fs.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
      const stat = await handle.stat();
      if (!stat.isFile() || stat.size > MAX_LICENSE_FILE_BYTES) continue;
      const text = (await handle.readFile()).toString('utf8');
      const match = matchLicenseText(text);
      if (match) return { license: match.license, source: `file:${name}` };
    } catch {
      // An unreadable file states nothing.
    } finally {
      await handle?.close();
    }
  }
  return { license: null, source: 'none' };
}

/** Whether a license is one of `allowed` (`crawl.github.licenses`: GitHub keys, any case). */
export function licenseAllowed(license: string | null, allowed: readonly string[]): boolean {
  return license !== null && allowed.some((a) => a.toLowerCase() === license.toLowerCase());
}

/**
 * A repository's license: the host's answer when it names one (GitHub's `license.key`), else
 * (none, "other", "noassertion") what the tree's license file states.
 */
export async function repositoryLicense(hostKey: string | null, tree: string): Promise<DetectedLicense> {
  if (hostKey && !['other', 'noassertion'].includes(hostKey.toLowerCase())) return { license: hostKey, source: 'github-api' };
  return detectLicense(tree);
}
