/**
 * Launch a crawl.
 *
 *   tsx scripts/start.ts --demo [--out DIR]            the bundled example, offline, scripted LLM
 *   tsx scripts/start.ts --local DIR [--local DIR...]  local repositories
 *   tsx scripts/start.ts --repos FILE                  one source a line: a local path or owner/name[@sha]
 *   tsx scripts/start.ts --github train|eval [--limit N]   GitHub search with the crawl filters of the
 *                                                      configuration (license, size, stars, creation window)
 *   tsx scripts/start.ts --attach RUN_ID               follow a crawl started earlier (its starter was
 *                                                      stopped or killed): workers run again, the result
 *                                                      is printed and the run's files written
 *   options: --out DIR  --run-id ID  --split train|eval (local sources; default train)
 *            --check-licenses (local folders too must state one of crawl.github.licenses in their
 *            license file; `crawl.checkLocalLicenses`; the license is recorded either way)
 *            --preset repost (RepoST's published selection: its function filters, line limits,
 *            per-repository sampling and context budgets, and its GitHub search filters and
 *            sample sizes, --limit 1000 for train and 300 for eval; `analysis.preset` in the
 *            configuration; settings given explicitly still win)
 *            --classes (class environments too: each repository's sampled classes through
 *            classWorkflow after its functions; `crawl.targets: both`), --classes-only (classes and
 *            no functions; `crawl.targets: classes`), --max-classes N (classes sampled per
 *            repository; `crawl.maxClassesPerRepo`, default 10). The demo makes both.
 *            --resume (continue the run --run-id names, with its own settings and sources)
 *            --no-workers (workers run elsewhere: tsx workers/main.ts)
 *            --progress-every SECONDS (the live view's refresh; default 2 on a terminal, 30 in a log)
 *            --estimate (print the functions and classes the crawl would select from its local
 *            folders and the expected LLM calls, tokens and cost per step and in all, then exit:
 *            no LLM call, no Temporal, no workers; with --run-id RUN --resume the run's own
 *            averages so far replace the measured ones)
 *
 * A run id or output folder already used by another run is refused with a message; `--resume`
 * continues that run on purpose: functions already recorded are kept and not run again.
 *
 * Before starting anything it checks that every local source is a folder and (for a new crawl
 * whose workers run here) that the LLM endpoint answers, accepts the key and serves the models the
 * crawl asks for (its model list); otherwise it exits 2 saying what to change.
 *
 * Temporal: TEMPORAL_ADDRESS when set, else the embedded dev server (SQLite file under the data
 * directory, web UI on port 8233). Configuration: temporal.config.ts and its environment variables.
 */
import * as path from 'node:path';
import { z } from 'zod';
import type { CrawlTargets, RepoSource } from '../activities/contracts';
import { ANALYSIS_PRESETS, REPOST_SELECTION } from '../activities/analysis/presets';
import { RunNotFoundError } from '../activities/dataset/run-reader';
import { crawlFiltersFromConfig, gitHubSourceFromConfig, readSourceList } from '../activities/sources';
import { RunIdSchema } from '../activities/store/types';
import { loadConfig, type Config } from '../temporal.config';
import { runCommand, UsageError } from './lib/cli';
import { newRunId, startCrawl } from './lib/crawl';
import { loadLlmScript, startScriptedLlmServer } from './scripted-llm/server';
import { startLiveView } from './lib/live-view';
import { estimateCrawl, formatCrawlEstimate } from './lib/estimate';
import { RepoSourceSchema } from '../activities/sources/repo-source';
import { openStore } from '../activities/store';
import { checkEndpoint, checkLocalSources, crawlModels } from './lib/preflight';
import { formatCostUsd, unpricedModels } from '../activities/llm/prices';
import { startStack } from './lib/stack';
import { ProgressTracker } from './lib/status';

const DEMO_REPO = path.join(__dirname, 'demo', 'example-repo');
const DEMO_SCRIPT = path.join(__dirname, 'demo', 'scripted-llm-responses.json');

const FlagsSchema = z.object({
  demo: z.boolean().default(false),
  local: z.array(z.string().min(1)).default([]),
  repos: z.string().min(1).optional(),
  github: z.enum(['train', 'eval']).optional(),
  limit: z.coerce.number().int().positive().optional(),
  preset: z.enum(ANALYSIS_PRESETS).optional(),
  'check-licenses': z.boolean().default(false),
  classes: z.boolean().default(false),
  'classes-only': z.boolean().default(false),
  'max-classes': z.coerce.number().int().positive().optional(),
  out: z.string().min(1).optional(),
  'run-id': RunIdSchema.optional(),
  split: z.enum(['train', 'eval']).optional(),
  resume: z.boolean().default(false),
  attach: RunIdSchema.optional(),
  'progress-every': z.coerce.number().positive().optional(),
  'no-workers': z.boolean().default(false),
  estimate: z.boolean().default(false),
});

const OPTIONS = {
  demo: { type: 'boolean' },
  local: { type: 'string', multiple: true },
  repos: { type: 'string' },
  github: { type: 'string' },
  limit: { type: 'string' },
  preset: { type: 'string' },
  'check-licenses': { type: 'boolean' },
  classes: { type: 'boolean' },
  'classes-only': { type: 'boolean' },
  'max-classes': { type: 'string' },
  out: { type: 'string' },
  'run-id': { type: 'string' },
  split: { type: 'string' },
  resume: { type: 'boolean' },
  attach: { type: 'string' },
  'progress-every': { type: 'string' },
  'no-workers': { type: 'boolean' },
  estimate: { type: 'boolean' },
} as const;

async function main(values: unknown): Promise<number> {
  const flags = FlagsSchema.parse(values);

  if (flags.classes && flags['classes-only']) throw new UsageError('--classes makes functions and classes, --classes-only classes alone: give one of them');
  // What the crawl makes environments of; the demo shows both.
  const targets: CrawlTargets | undefined = flags['classes-only'] ? 'classes' : flags.classes || flags.demo ? 'both' : undefined;
  const crawl = {
    ...(flags['check-licenses'] ? { checkLocalLicenses: true } : {}),
    ...(targets ? { targets } : {}),
    ...(flags['max-classes'] ? { maxClassesPerRepo: flags['max-classes'] } : {}),
  };
  const presetOverride = {
    ...(flags.preset ? { analysis: { preset: flags.preset } } : {}),
    ...(Object.keys(crawl).length ? { crawl } : {}),
  };
  let config: Config = loadConfig({ overrides: presetOverride });
  const sources: RepoSource[] = flags.local.map((p) => ({ kind: 'local', path: p, ...(flags.split ? { split: flags.split } : {}) }));
  if (flags.repos) {
    sources.push(...readSourceList(flags.repos, flags.split));
  }
  if (flags.github) {
    // RepoST's crawl: search with the configured filters, sliced by creation date past the API's
    // 1,000-result cap, then a seeded sample.
    // RepoST sampled 1,000 training and 300 evaluation repositories from its search results.
    const limit = flags.limit ?? (config.analysis.preset === 'repost' ? REPOST_SELECTION.repositories.sample[flags.github] : 100);
    const found = await gitHubSourceFromConfig(config, (l) => console.log(l)).search(crawlFiltersFromConfig(config, flags.github), { limit, seed: config.crawl.seed });
    console.log(`GitHub search (${flags.github} window): ${found.total} repositories in ${found.windows} date window(s), ${found.repos.length} sampled`);
    sources.push(...found.repos.map((r): RepoSource => ({ kind: 'github', fullName: r.id, split: flags.github })));
  }
  const cleanups: (() => Promise<void>)[] = [];
  if (flags.demo) {
    sources.push({ kind: 'local', path: DEMO_REPO, name: 'textkit-demo', ...(flags.split ? { split: flags.split } : {}) });
    if (flags.estimate) {
      config = loadConfig({ overrides: { ...presetOverride, llm: { model: 'scripted-demo' } } });
    } else {
      // The offline demo's LLM: scripted responses served over real HTTP to the real client.
      const server = await startScriptedLlmServer(loadLlmScript(DEMO_SCRIPT));
      cleanups.push(() => server.close());
      config = loadConfig({ overrides: { ...presetOverride, llm: { baseUrl: server.url, apiKey: 'scripted', model: 'scripted-demo' } } });
      console.log(`scripted LLM server (demo fixture ${path.relative(process.cwd(), DEMO_SCRIPT)}) at ${server.url}`);
    }
  }
  if (flags.attach && (sources.length > 0 || flags.resume || flags['run-id'])) {
    throw new UsageError('--attach RUN follows an existing crawl: give it alone (with --out DIR to write the files elsewhere)');
  }
  if (sources.length === 0 && !flags.attach && !flags.resume) {
    throw new UsageError('nothing to crawl: give --demo, --local DIR, --repos FILE, --github train|eval, --attach RUN or --run-id RUN --resume');
  }
  if (flags.resume && !flags['run-id']) throw new UsageError('--resume needs the --run-id of the run to continue');
  // Before anything starts: the local sources are folders, and (when this process runs the workers
  // of a new crawl) the LLM endpoint answers and serves the models the crawl will ask for.
  checkLocalSources(sources);
  if (flags.estimate) return printEstimate(config, sources, flags);
  if (!flags.demo && !flags.attach && !flags.resume && !flags['no-workers']) {
    await checkEndpoint(config.llm, crawlModels(config), { note: (l) => console.log(l) });
  }

  const stack = await startStack({ config, workers: !flags['no-workers'], log: (l) => console.log(l) });
  cleanups.unshift(() => stack.close());
  let stopping = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      if (stopping) return;
      stopping = true;
      console.log(`\n${sig}: stopping workers and the servers this command started; the run stays in Temporal`);
      void Promise.all(cleanups.map((c) => c())).finally(() => process.exit(130));
    });
  }

  try {
    const runId = flags.attach ?? flags['run-id'] ?? newRunId(flags.demo ? 'demo' : 'run');
    const attaching = Boolean(flags.attach);
    if (attaching && !(await stack.store.getRun(runId))) throw new RunNotFoundError(`no run ${runId} in the store at ${stack.store.location}`);
    const started = await startCrawl({
      config,
      client: stack.client,
      store: stack.store,
      sources,
      runId,
      outDir: flags.out ?? (attaching ? ((await stack.store.getRun(runId))?.outDir ?? undefined) : undefined),
      resume: flags.resume || attaching,
      log: (l) => console.log(l),
    });
    const uiBase = stack.uiUrl ?? `http://localhost:${config.temporal.uiPort}`;
    const uiRuns = `${uiBase}/namespaces/${config.temporal.namespace}/workflows?query=${encodeURIComponent(`RepostRunId="${runId}"`)}`;
    console.log(`run ${runId}: crawling ${sources.length} repositor${sources.length === 1 ? 'y' : 'ies'} (workflow ${started.workflowId})`);
    console.log(`watch it in the Temporal UI: ${uiRuns}`);
    // While it runs: repositories, functions by stage, accepted and rejected, LLM use, time left.
    const every = flags['progress-every'];
    const live = startLiveView(new ProgressTracker(stack.store, runId, stack.client, Date.now, config.dataDir), every ? { everyMs: every * 1000 } : {});
    let summary: Awaited<ReturnType<typeof started.result>>;
    try {
      summary = await started.result();
    } finally {
      await live.stop();
    }
    const rejectedAt = Object.entries(summary.rejectedAt)
      .filter(([, n]) => n > 0)
      .map(([stage, n]) => `${stage}: ${n}`)
      .join(', ');
    console.log('');
    console.log(`run ${runId} finished: ${summary.functions} function(s), ${summary.accepted} accepted, ${summary.rejected} rejected${rejectedAt ? ` (${rejectedAt})` : ''}`);
    const llm = summary.llm.total;
    if (llm) {
      console.log(`LLM: ${llm.calls} call(s), ${llm.cachedCalls} from the cache, ${llm.promptTokens} prompt + ${llm.completionTokens} completion tokens, estimated ${formatCostUsd(llm.costUsd, unpricedModels(config.llm, [config.loops.solvability.model]))}`);
    }
    const classes = summary.classes;
    if (classes) {
      const classRejectedAt = Object.entries(classes.rejectedAt)
        .filter(([, n]) => n > 0)
        .map(([stage, n]) => `${stage}: ${n}`)
        .join(', ');
      const dropped = Object.entries(classes.selection.droppedBy)
        .filter(([, n]) => n > 0)
        .map(([rule, n]) => `${rule} ${n}`)
        .join(', ');
      console.log(`class environments: ${classes.classes} class(es), ${classes.accepted} accepted, ${classes.rejected} rejected${classRejectedAt ? ` (${classRejectedAt})` : ''}; of ${classes.selection.found} classes found, ${classes.selection.kept} kept${dropped ? ` (dropped by ${dropped})` : ''}`);
    }
    console.log(`dataset written to ${started.outDir}/`);
    console.log(`  dataset.jsonl (${summary.accepted} records), rejections.jsonl, summary.json, run.json, report.html`);
    if (classes) console.log(`  classes-dataset.jsonl (${classes.accepted} class environment(s)), classes-rejections.jsonl`);
    console.log(`Temporal UI for this run: ${uiRuns}`);
    if (!config.temporal.address) {
      console.log('  the runs stay in the dev server\'s SQLite file; to browse them later run `npm run ui` and open the address above');
    }
    return 0;
  } finally {
    for (const c of cleanups) await c();
  }
}

/** --estimate: the crawl's expected calls, tokens and cost, before any call; nothing is started. */
async function printEstimate(config: Config, sources: RepoSource[], flags: z.infer<typeof FlagsSchema>): Promise<number> {
  if (flags.attach) throw new UsageError('--estimate plans a crawl: give it with the sources, or with --run-id RUN --resume, not with --attach');
  if (!flags.resume) {
    console.log(formatCrawlEstimate(await estimateCrawl(config, sources)));
    return 0;
  }
  const store = await openStore(config);
  try {
    const runId = flags['run-id']!;
    const run = await store.getRun(runId);
    if (!run) throw new RunNotFoundError(`no run ${runId} in the store at ${store.location}`);
    const own = sources.length > 0 || !run.sourcesKey ? sources : z.array(RepoSourceSchema).parse(await store.getJson(run.sourcesKey));
    console.log(formatCrawlEstimate(await estimateCrawl(config, own, { store, runId })));
    return 0;
  } finally {
    await store.close();
  }
}

runCommand({ file: __filename, options: OPTIONS, run: ({ values }) => main(values) });
