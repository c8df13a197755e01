/**
 * Repository and dataset I/O activities (task queue `io`): sources, snapshots, analysis,
 * records. Thin wrappers over the domain modules; everything they keep goes to the store.
 */
import { z } from 'zod';
import * as path from 'node:path';
import type { Config } from '../temporal.config';
import { dataPaths } from '../temporal.config';
import { chooseCandidates, classSelectionCounts, RepositoryAnalyzer, selectClassCandidates } from './analysis';
import type { CandidateList, ClassCandidateList, FunctionOutcome, FunctionRef, RepoSnapshot, Split } from './contracts';
import { summarizeRun } from './dataset/run-files';
import { writeRunOutputs } from './report/run-outputs';
import { activityHooks, RunConfigs, whileHeartbeating } from './run-context';
import { snapshotGitHubRepository, splitOf } from './sources';
import { detectLicense, licenseAllowed, repositoryLicense } from './sources/license';
import { RepoSourceSchema, snapshotLocalFolder, SourceError } from './sources/repo-source';
import type { Store } from './store/types';
import { buildStoredRecord, classKind, functionKind, kindOf } from './targets';
import type { IoActivities } from './types';

/** A function whose workflow failed was never checked against a threshold (and a rejection carries none). */
const NO_THRESHOLDS = { coverage: 0, astCheckRequired: false } as const;

/** Candidates per page in the store: a page stays a few tens of KB, a repository any size. */
export const CANDIDATE_PAGE_SIZE = 100;

export interface IoDependencies {
  config: Config;
  store: Store;
}

export function createIoActivities({ config, store }: IoDependencies): IoActivities {
  const runs = new RunConfigs(config, store);

  /** The parsed snapshot; one parse serves the listing and all its functions while the repository window is open. */
  async function analyzerOf(runConfig: Config, repoId: string, commit: string, split: Split) {
    const dir = await store.openSnapshot(repoId, commit);
    if (!dir) throw new SourceError(`snapshot ${repoId}@${commit} is not in the store (${store.location})`);
    const options = { ...runConfig.analysis, repoId, commit, split, contextTokenBudget: runConfig.analysis.contextTokenBudget[split] };
    return RepositoryAnalyzer.openCached(dir, options, runConfig.crawl.repoWindow + 1);
  }

  return {
    async loadSources({ run, sourcesKey, offset, limit }) {
      await runs.forRun(run);
      const all = z.array(RepoSourceSchema).parse(await store.getJson(sourcesKey));
      return { sources: all.slice(offset, offset + limit), total: all.length };
    },

    async snapshotRepository({ run, source }) {
      const runConfig = await runs.forRun(run);
      return whileHeartbeating(async () => {
        try {
          if (source.kind === 'local') {
            const { repoId, commit, commitDate } = await snapshotLocalFolder(store, source);
            const dir = await store.openSnapshot(repoId, commit);
            if (!dir) return { ok: false as const, reason: `snapshot ${repoId}@${commit} is missing from the store` };
            // No host to ask: the license is what the folder's license file states.
            const { license, source: licenseSource } = await detectLicense(dir);
            const allowed = runConfig.crawl.github.licenses;
            if (runConfig.crawl.checkLocalLicenses && !licenseAllowed(license, allowed)) {
              return { ok: false as const, reason: `license: ${license ?? 'none found in a license file'}, not one of crawl.github.licenses (${allowed.join(', ')})` };
            }
            return { ok: true as const, snapshot: { repoId, commit, commitDate, split: source.split ?? 'train', license, licenseSource } };
          }
          // Pinned to a commit and fetched as a tarball; a bad repository is a skip with a reason,
          // a transient API failure throws and Temporal retries.
          const r = await snapshotGitHubRepository(runConfig, source.fullName, source.commit);
          if (!r.ok) return { ok: false as const, reason: `${r.skip.stage}: ${r.skip.reason}` };
          await store.saveSnapshot(r.snapshot.repoId, r.snapshot.commit, r.snapshot.dir);
          const split: Split = source.split ?? splitOf(r.ref.createdAt, runConfig.crawl.github) ?? 'train';
          // GitHub's answer when it names a license; else (none, or "other") the tarball's license file.
          const detected = await repositoryLicense(r.ref.license, r.snapshot.dir);
          const snapshot: RepoSnapshot = { repoId: r.snapshot.repoId, commit: r.snapshot.commit, commitDate: r.ref.commitDate ?? null, split, license: detected.license, licenseSource: detected.source };
          return { ok: true as const, snapshot };
        } catch (err) {
          if (err instanceof SourceError) return { ok: false as const, reason: err.message };
          throw err;
        }
      });
    },

    async listCandidates({ run, snapshot, index, source }) {
      const runConfig = await runs.forRun(run);
      return whileHeartbeating(async () => {
        const analyzer = await analyzerOf(runConfig, snapshot.repoId, snapshot.commit, snapshot.split);
        const all = analyzer.functions();
        const chosen = chooseCandidates(all, { preset: runConfig.analysis.preset, split: snapshot.split, max: runConfig.crawl.maxFunctionsPerRepo, seed: runConfig.crawl.seed });
        const refs: FunctionRef[] = chosen.map((f) => functionKind.ref(snapshot, f));
        const pageKeys: string[] = [];
        for (let i = 0; i < refs.length; i += CANDIDATE_PAGE_SIZE) pageKeys.push(await store.putJson(refs.slice(i, i + CANDIDATE_PAGE_SIZE)));
        const list: CandidateList = {
          pageKeys,
          candidates: refs.length,
          total: all.length,
          dropped: all.filter((f) => !f.kept).length,
          skippedFiles: analyzer.skipped.length,
        };
        // Recorded now, so the run knows its candidates even if the repository never finishes.
        await store.putRepoProgress(run.runId, {
          index,
          outcome: { repoId: snapshot.repoId, source, skipped: null, candidates: refs.length, accepted: 0, rejected: 0 },
          candidatePages: pageKeys,
          done: false,
        });
        return list;
      });
    },

    async listClassCandidates({ run, snapshot, index, source }) {
      const runConfig = await runs.forRun(run);
      return whileHeartbeating(async () => {
        const analyzer = await analyzerOf(runConfig, snapshot.repoId, snapshot.commit, snapshot.split);
        const all = analyzer.classCandidates();
        const chosen = selectClassCandidates(all, runConfig.crawl.maxClassesPerRepo, runConfig.crawl.seed);
        const refs = chosen.map((c) => classKind.ref(snapshot, { id: c.id, path: c.info.path, qualname: c.info.qualname, name: c.info.name }));
        const pageKeys: string[] = [];
        for (let i = 0; i < refs.length; i += CANDIDATE_PAGE_SIZE) pageKeys.push(await store.putJson(refs.slice(i, i + CANDIDATE_PAGE_SIZE)));
        const counts = classSelectionCounts(all);
        // The repository's progress lists the class pages after its function pages (a crawl of classes only has none).
        const earlier = (await store.listRepoProgress(run.runId)).find((p) => p.index === index);
        await store.putRepoProgress(run.runId, {
          index,
          outcome: { repoId: snapshot.repoId, source, skipped: null, candidates: (earlier?.outcome.candidates ?? 0) + refs.length, accepted: 0, rejected: 0 },
          candidatePages: [...(earlier?.candidatePages ?? []), ...pageKeys],
          classSelection: { ...counts, sampled: refs.length },
          done: false,
        });
        const list: ClassCandidateList = { pageKeys, candidates: refs.length, found: counts.found, kept: counts.kept, droppedBy: counts.droppedBy };
        return list;
      });
    },

    async loadCandidatePage({ run, pageKey }) {
      await runs.forRun(run);
      const page = await store.getJson<FunctionRef[]>(pageKey);
      const recorded = await store.recordedIds(run.runId, page.map((f) => f.functionId));
      return { functions: page.filter((f) => !recorded.has(f.functionId)), alreadyRecorded: recorded.size };
    },

    async prepareFunction({ run, fn }) {
      const runConfig = await runs.forRun(run);
      return whileHeartbeating(async () => {
        try {
          const analyzer = await analyzerOf(runConfig, fn.repoId, fn.commit, fn.split);
          return await kindOf(fn).prepare(analyzer, fn, store);
        } catch (err) {
          if (err instanceof SourceError) throw err;
          return { ok: false as const, reason: `analysis failed: ${(err as Error).message}` };
        }
      });
    },

    async writeRecord(input) {
      await runs.forRun(input.run);
      // The thresholds are the ones the function's workflow applied.
      await store.putRecord(input.run.runId, await buildStoredRecord(store, input, input.thresholds, input.run.settingsKey));
    },

    async writeFailedFunction({ run, fn, reason }) {
      await runs.forRun(run);
      const existing = await store.getRecord(run.runId, fn.functionId);
      const outcomeOf = (stage: FunctionOutcome['stage'], why: string, rounds = { debug: 0, coverage: 0, tokens: 0 }): FunctionOutcome => ({
        functionId: fn.functionId,
        path: fn.path,
        qualname: fn.qualname,
        accepted: stage === 'accepted',
        stage,
        reason: why,
        debugRounds: rounds.debug,
        coverageRounds: rounds.coverage,
        branchCoverage: null,
        tokens: rounds.tokens,
      });
      // The function's own record came first (it failed after writing it): that record stands.
      if (existing) {
        if (existing.accepted) return outcomeOf('accepted', 'recorded before its workflow failed', { debug: existing.record.debug_rounds, coverage: existing.record.coverage_rounds, tokens: existing.record.llm_tokens });
        const r = existing.rejection;
        return outcomeOf(r.stage as FunctionOutcome['stage'], r.reason, { debug: r.debug_rounds, coverage: r.coverage_rounds, tokens: r.llm_tokens });
      }
      const outcome = outcomeOf('internal', reason.slice(0, 2000));
      const stored = await buildStoredRecord(
        store,
        { run, fn, thresholds: NO_THRESHOLDS, prepared: null, outcome, scriptKey: null, execution: null, astEquivalent: null, functionality: null, testCorrectness: null, promptVersions: {} },
        NO_THRESHOLDS,
        run.settingsKey,
      );
      await store.putRecord(run.runId, stored);
      return outcome;
    },

    async writeRepoOutcome({ run, index, outcome, candidates }) {
      await runs.forRun(run);
      // A repository that failed after listing keeps its candidate pages: its recorded functions stay in the run.
      const earlier = (await store.listRepoProgress(run.runId)).find((p) => p.index === index);
      const pages = candidates?.pageKeys ?? earlier?.candidatePages ?? [];
      // The class filters' counts, when classes were listed, stay with the repository.
      const classSelection = earlier?.classSelection ? { classSelection: earlier.classSelection } : {};
      await store.putRepoProgress(run.runId, { index, outcome, candidatePages: pages, ...classSelection, done: true });
    },

    async finalizeRun({ run }) {
      await runs.forRun(run);
      const { heartbeat } = activityHooks();
      const summary = await summarizeRun(store, run.runId, { tick: heartbeat });
      await store.updateRun(run.runId, { status: 'finished', summary, finishedAt: new Date().toISOString() });
      const { runId, repositories, functions, accepted, rejected, funnel } = summary;
      return { runId, repositories, functions, accepted, rejected, funnel };
    },

    async writeRunOutputs({ run }) {
      await runs.forRun(run);
      const manifest = await store.getRun(run.runId);
      const outDir = manifest?.outDir ?? path.join(dataPaths(config).runs, run.runId);
      const { heartbeat } = activityHooks();
      return whileHeartbeating(() => writeRunOutputs(store, run.runId, outDir, { tick: heartbeat }));
    },
  };
}
