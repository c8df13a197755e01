/**
 * Messages and documentation name configuration keys by their current names: no key renamed in
 * this release appears under its old name (as a key or as its environment variable) outside the
 * configuration's own list of renames and the configuration page's paragraph about them, and every key the
 * documentation names exists.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { configKeys, envNameFor, RENAMED_KEYS } from '../../../temporal.config';

const ROOT = path.resolve(__dirname, '../../..');
const SCANNED = ['activities', 'scripts', 'workers', 'workflows', 'sandbox-image', 'docs'];

function filesUnder(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|py|md|sh)$/.test(e.name))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const RENAMES_PAGE = 'docs/configuration.md';
/** The configuration's own list of renames, which names the old keys. */
const RENAMES_LIST = 'activities/config/renamed-keys.ts';

/** A documentation file's text, the configuration page without its paragraph listing the renames (which must name the old keys). */
function readDoc(file: string): string {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  if (file !== RENAMES_PAGE) return text;
  const start = text.indexOf('Renamed in this release');
  expect(start).toBeGreaterThan(0);
  const end = text.indexOf('\n\n', start);
  return text.slice(0, start) + text.slice(end);
}

describe('configuration names in messages and documentation', () => {
  it('never use a renamed key under its old name', () => {
    const texts: [string, string][] = [...SCANNED.flatMap(filesUnder).filter((f) => f !== RENAMES_LIST), 'README.md'].map((f) => [f, readDoc(f)]);
    const old = RENAMED_KEYS.flatMap((r) => [r.from, ...(envNameFor(r.from) !== envNameFor(r.to) ? [envNameFor(r.from)] : [])]);
    const found: string[] = [];
    for (const [file, text] of texts) {
      for (const name of old) {
        if (new RegExp(`(?<![\\w.])${escape(name)}(?![\\w])`).test(text)) found.push(`${file}: ${name}`);
      }
    }
    expect(found).toEqual([]);
  });

  it('name only keys that exist', () => {
    const keys = configKeys().map((k) => k.path);
    const sections = new Set(keys.map((k) => k.split('.')[0]!));
    const exists = (name: string): boolean => {
      // `a.{b,c}` and `a.*` name several keys; each must exist.
      const brace = /^(.*)\{([^}]+)\}(.*)$/.exec(name);
      if (brace) return brace[2]!.split(',').every((part) => exists(`${brace[1]}${part.trim()}${brace[3]}`));
      const prefix = name.endsWith('.*') ? name.slice(0, -2) : name;
      return keys.some((k) => k === prefix || k.startsWith(`${prefix}.`));
    };
    const docs: [string, string][] = [...SCANNED.flatMap(filesUnder).filter((f) => f.endsWith('.md')), 'README.md'].map((f) => [f, readDoc(f)]);
    const missing: string[] = [];
    for (const [file, text] of docs) {
      for (const m of text.matchAll(/`([a-z][A-Za-z]*(?:\.(?:[A-Za-z*]+|\{[A-Za-z, ]+\}))+)(?:=[^`]*)?`/g)) {
        const name = m[1]!;
        if (!sections.has(name.split('.')[0]!) || /\.(ts|py|json|jsonl|md|html|sh|txt|toml)$/.test(name)) continue;
        if (!exists(name)) missing.push(`${file}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
