/**
 * Repository lists: one `owner/name@sha` per line (`#` comments and blank lines allowed). A line
 * without `@sha` is accepted and pinned later to the default branch's head.
 */
import { z } from 'zod';
import type { RepoRef } from './types';

const LINE_RE = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9._-]{1,100})(?:@([0-9a-fA-F]{7,40}))?$/;

export const RepoLineSchema = z.string().regex(LINE_RE, 'expected owner/name or owner/name@sha');

export class RepoListError extends Error {
  override name = 'RepoListError';
}

export function listSource(text: string): RepoRef[] {
  const refs: RepoRef[] = [];
  const seen = new Set<string>();
  const errors: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) return;
    const parsed = RepoLineSchema.safeParse(line);
    if (!parsed.success) {
      errors.push(`line ${i + 1}: ${JSON.stringify(line)}: ${parsed.error.issues[0]!.message}`);
      return;
    }
    const m = LINE_RE.exec(line)!;
    const id = `${m[1]}/${m[2]}`;
    const key = `${id}@${m[3] ?? ''}`.toLowerCase();
    if (seen.has(key)) return;
    seen.add(key);
    refs.push({ id, owner: m[1]!, name: m[2]!, commit: m[3]?.toLowerCase() ?? null, createdAt: null, license: null, stars: null, sizeKb: null, defaultBranch: null });
  });
  if (errors.length) throw new RepoListError(`invalid repository list:\n  ${errors.join('\n  ')}`);
  return refs;
}
