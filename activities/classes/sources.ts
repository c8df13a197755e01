/**
 * Where the class corpus reads repositories from: the snapshots a crawl used (a run id in the
 * store or a run's folder), or sources given as the crawl takes them (local folders,
 * `owner/name[@sha]` on GitHub, a list file of either). Each comes out as a folder to read with
 * its repository id, commit, license and split, or as a skip with its reason; nothing here
 * throws for one bad repository.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { Config } from '../../temporal.config';
import type { FunctionRef, RepoSource, Split } from '../contracts';
import { openRunReader, RunNotFoundError, StoreRunReader } from '../dataset/run-reader';
import { localRepoId, pinLocalFolder, RepoLineSchema, RepoSourceSchema, snapshotGitHubRepository, sourceOfLine, splitOf } from '../sources';
import type { Store } from '../store/types';

export interface CorpusRepository {
  repoId: string;
  commit: string;
  license: string | null;
  split: Split;
  /** The tree to read. */
  dir: string;
}

export type CorpusSource = { ok: true; repo: CorpusRepository } | { ok: false; source: string; reason: string };

/** One input of `scripts/classes.ts`: a run, a local folder or a GitHub repository. */
export type CorpusInput = { kind: 'run'; run: string } | { kind: 'source'; source: RepoSource };

export class CorpusInputError extends Error {
  override name = 'CorpusInputError';
}

/** A repository id read from a run's files: owner/name or a folder name, never a path that climbs. */
const RepoIdSchema = z
  .string()
  .regex(/^[\w.-]{1,100}(\/[\w.-]{1,100})?$/, 'not a repository id')
  .refine((id) => id.split('/').every((p) => p !== '.' && p !== '..'), 'not a repository id');

/**
 * What an argument names: a run (a run id in the store, or a folder holding a run's summary.json),
 * else a local folder or `owner/name[@sha]`.
 */
export async function classifyInput(store: Store, arg: string, split?: Split): Promise<CorpusInput> {
  try {
    await openRunReader(store, arg);
    return { kind: 'run', run: arg };
  } catch (err) {
    if (!(err instanceof RunNotFoundError)) throw err;
  }
  if (fs.existsSync(arg)) {
    if (!fs.statSync(arg).isDirectory()) throw new CorpusInputError(`${arg} is a file: give a folder, a run, owner/name[@sha], or a list with --repos`);
    return { kind: 'source', source: { kind: 'local', path: arg, ...(split ? { split } : {}) } };
  }
  if (RepoLineSchema.safeParse(arg).success) return { kind: 'source', source: sourceOfLine(arg, split) };
  throw new CorpusInputError(`${arg}: neither a run (id in the store or folder), nor a folder, nor owner/name[@sha]`);
}

function describe(source: RepoSource): string {
  return source.kind === 'local' ? source.path : `${source.fullName}${source.commit ? `@${source.commit}` : ''}`;
}

/** One source given directly: a local folder read in place, or a GitHub repository snapshotted as a crawl does. */
export async function resolveSource(config: Config, source: RepoSource, log?: (m: string) => void): Promise<CorpusSource> {
  if (source.kind === 'local') {
    const dir = path.resolve(source.path);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) return { ok: false, source: source.path, reason: 'not a folder' };
    return { ok: true, repo: { repoId: localRepoId(source), commit: await pinLocalFolder(dir), license: null, split: source.split ?? 'train', dir } };
  }
  const r = await snapshotGitHubRepository(config, source.fullName, source.commit, log);
  if (!r.ok) return { ok: false, source: describe(source), reason: `${r.skip.stage}: ${r.skip.reason}` };
  const split = source.split ?? splitOf(r.ref.createdAt, config.crawl.github) ?? 'train';
  return { ok: true, repo: { repoId: r.snapshot.repoId, commit: r.snapshot.commit, license: r.ref.license, split, dir: r.snapshot.dir } };
}

interface Pinned {
  commit: string;
  license: string | null;
  split: Split;
}

/**
 * The repositories of a run, read from the snapshots it used: local folders by the commit the
 * launcher pinned, GitHub repositories by the commit its functions were recorded at (from the
 * run's candidate lists in the store, or its records in a run folder).
 */
export async function* runRepositories(store: Store, run: string): AsyncGenerator<CorpusSource> {
  const reader = await openRunReader(store, run);
  const info = await reader.info();
  const recorded = new Map<string, Pinned>();
  const note = (repoId: string, p: Pinned) => {
    if (!recorded.has(repoId)) recorded.set(repoId, p);
  };
  if (reader instanceof StoreRunReader) {
    for (const progress of await store.listRepoProgress(reader.runId)) {
      const page = progress.candidatePages[0];
      if (!page) continue;
      const [first] = await store.getJson<FunctionRef[]>(page);
      if (first) note(first.repoId, { commit: first.commit, license: first.license, split: first.split });
    }
  } else {
    for await (const r of reader.records()) note(r.repo_name, { commit: r.commit_id, license: r.license ?? null, split: r.split });
  }
  const seen = new Set<string>();
  for (const raw of info.sources) {
    const parsed = RepoSourceSchema.safeParse(raw);
    if (!parsed.success) {
      yield { ok: false, source: JSON.stringify(raw).slice(0, 200), reason: 'not a source this factory writes' };
      continue;
    }
    const source = parsed.data;
    const repoId = source.kind === 'local' ? (source.pinned?.repoId ?? localRepoId(source)) : source.fullName;
    const known = recorded.get(repoId);
    const commit = source.kind === 'local' ? source.pinned?.commit : (source.commit ?? known?.commit);
    if (!RepoIdSchema.safeParse(repoId).success) {
      yield { ok: false, source: describe(source), reason: `not a repository id: ${JSON.stringify(repoId.slice(0, 100))}` };
      continue;
    }
    if (!commit) {
      yield { ok: false, source: describe(source), reason: 'the run recorded no commit for it (not pinned, and no function of it was listed)' };
      continue;
    }
    if (seen.has(`${repoId}@${commit}`)) continue;
    seen.add(`${repoId}@${commit}`);
    let dir: string | null;
    try {
      dir = await store.openSnapshot(repoId, commit);
    } catch (err) {
      yield { ok: false, source: describe(source), reason: `snapshot ${repoId}@${commit}: ${(err as Error).message}` };
      continue;
    }
    if (!dir) {
      yield { ok: false, source: describe(source), reason: `snapshot ${repoId}@${commit} is not in the store at ${store.location}` };
      continue;
    }
    yield { ok: true, repo: { repoId, commit, license: known?.license ?? null, split: source.split ?? known?.split ?? 'train', dir } };
  }
}
