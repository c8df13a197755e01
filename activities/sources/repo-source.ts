/**
 * A crawl's repository source (`RepoSource`): its schema where sources enter (a list file, the
 * store), the repository id of a local folder, and pinning a local folder and keeping its tree in
 * the store, which the launcher does before a crawl starts (workers elsewhere cannot read the
 * folder) and an io worker does for a source left unpinned.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { RepoSource, Split } from '../contracts';
import { hashTree } from '../store/snapshots';
import { localCommitDate } from './commit-date';
import type { Store } from '../store/types';
import { listSource, RepoLineSchema } from './list';
import { cleanCheckoutHead } from './git-checkout';

export const RepoSourceSchema: z.ZodType<RepoSource> = z.union([
  z.object({
    kind: z.literal('local'),
    path: z.string().min(1),
    name: z.string().optional(),
    split: z.enum(['train', 'eval']).optional(),
    pinned: z.object({ repoId: z.string().min(1), commit: z.string().min(1), commitDate: z.string().nullable().optional() }).optional(),
  }),
  z.object({ kind: z.literal('github'), fullName: z.string().regex(/^[\w.-]+\/[\w.-]+$/), commit: z.string().optional(), split: z.enum(['train', 'eval']).optional() }),
]);

/**
 * One source as a list line or a command-line argument names it: `owner/name[@sha]` on GitHub,
 * unless a folder of that name exists; anything else is a local folder. `split` (given for local
 * folders) goes on the source when set.
 */
export function sourceOfLine(line: string, split?: Split): RepoSource {
  const withSplit = split ? { split } : {};
  if (!fs.existsSync(line) && RepoLineSchema.safeParse(line).success) {
    const [ref] = listSource(line);
    return RepoSourceSchema.parse({ kind: 'github', fullName: ref!.id, ...(ref!.commit ? { commit: ref!.commit } : {}), ...withSplit });
  }
  return RepoSourceSchema.parse({ kind: 'local', path: line, ...withSplit });
}

/** The sources of a list file: one a line (see `sourceOfLine`), blank lines and lines starting with `#` skipped. */
export function readSourceList(file: string, split?: Split): RepoSource[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => sourceOfLine(l, split));
}

/**
 * The HEAD commit when the folder is a clean git checkout of its own, else a hash of the tree's
 * paths and contents (a subfolder of a larger repository is pinned by its own content). The
 * checkout is read in-process (`git-checkout.ts`), never by running git: the folder's own git
 * configuration never runs anything on this machine.
 */
export async function pinLocalFolder(dir: string): Promise<string> {
  return (await cleanCheckoutHead(dir)) ?? `tree-${(await hashTree(dir)).hash.slice(0, 32)}`;
}

/** A source that cannot be used (a folder that is not there): the crawl records it as skipped. */
export class SourceError extends Error {
  override name = 'SourceError';
}

/** The repository id of a local folder: its given name, else the folder's name. */
export function localRepoId(source: Extract<RepoSource, { kind: 'local' }>): string {
  return source.name ?? path.basename(path.resolve(source.path));
}

/**
 * Pins a local folder and keeps its tree in the store. The launcher does this before a crawl
 * starts (workers on other machines cannot read the folder); an unpinned source is pinned by the
 * io worker, which then must run where the folder is.
 */
export async function snapshotLocalFolder(store: Store, source: Extract<RepoSource, { kind: 'local' }>): Promise<{ repoId: string; commit: string; commitDate: string | null }> {
  if (source.pinned) return { ...source.pinned, commitDate: source.pinned.commitDate ?? null };
  const dir = path.resolve(source.path);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new SourceError(`not a directory: ${source.path}`);
  const repoId = localRepoId(source);
  const commit = await pinLocalFolder(dir);
  await store.saveSnapshot(repoId, commit, dir);
  // A checkout's commit has a date (its packages are resolved as of it); a tree's hash has none.
  return { repoId, commit, commitDate: await localCommitDate(dir, commit) };
}
