/**
 * `start.ts --estimate` against a crawl that makes class environments: the estimate's class steps
 * (calls, tokens, cost) for the same sources and configuration, beside what the real crawl spent.
 * The crawl runs on the real components (Temporal, containers) with scripted answers (fixtures:
 * the demo's for `Tally`, accepted after a debug and a coverage round; the class-environment
 * fixture's for `Shelf`, rejected at the functionality check), as the function test in
 * dataset-product.test.ts does for functions.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadLlmScript } from '../../scripts/scripted-llm/server';
import { runCrawl } from '../../scripts/lib/crawl';
import { estimateCrawl } from '../../scripts/lib/estimate';
import { startTestFactory, type TestFactory } from '../support/factory';

const ROOT = path.resolve(__dirname, '../..');
const DEMO_REPO = path.join(ROOT, 'scripts/demo/example-repo');
const SHELF_REPO = path.join(ROOT, 'test/fixtures/repos/shelf');
const DEMO_SCRIPTED_RESPONSES = path.join(ROOT, 'scripts/demo/scripted-llm-responses.json');
const CLASS_SCRIPTED_RESPONSES = path.join(ROOT, 'test/fixtures/scripted-llm/class-environments.json');

const SOURCES = [
  { kind: 'local' as const, path: DEMO_REPO, name: 'textkit' },
  { kind: 'local' as const, path: SHELF_REPO, name: 'shelf' },
];

interface Usage {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

describe('the estimate of a crawl of classes', () => {
  let factory: TestFactory;
  beforeAll(async () => {
    const scripted = { rules: [...loadLlmScript(DEMO_SCRIPTED_RESPONSES).rules, ...loadLlmScript(CLASS_SCRIPTED_RESPONSES).rules] };
    // Priced, so the estimate's cost can be compared too (no cached share: the endpoint has no cache here).
    factory = await startTestFactory(scripted, {
      crawl: { targets: 'classes' },
      llm: { prices: { 'scripted-test': { inputPerMTok: 2, outputPerMTok: 8 } } },
    });
  });
  afterAll(async () => {
    await factory?.close();
  });

  it("start.ts --estimate's calls, tokens and cost are within 30% of the crawl's", async () => {
    const { estimate, notEstimated } = await estimateCrawl(factory.config, SOURCES);
    expect(notEstimated).toEqual([]);
    // Estimated before the crawl: two classes, no function.
    expect(estimate.targets).toMatchObject({ functions: 0, classes: 2 });
    expect(estimate.steps.every((s) => s.step.startsWith('class_') || s.calls === 0)).toBe(true);

    const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: SOURCES, runId: 'it-estimate-cls' });
    const saved = JSON.parse(fs.readFileSync(path.join(summary.outDir, 'summary.json'), 'utf8')) as { classes: { classes: number }; llm: { total: Usage; byStep: Record<string, Usage> } };
    expect(saved.classes.classes).toBe(2);
    const actual = saved.llm.total;
    expect(Object.keys(saved.llm.byStep).every((step) => step.startsWith('class_'))).toBe(true);

    for (const s of estimate.steps.filter((x) => x.calls > 0 || saved.llm.byStep[x.step])) {
      const a = saved.llm.byStep[s.step];
      console.log(`${s.step}: estimate ${s.calls.toFixed(2)} calls, ${s.promptTokens} + ${s.completionTokens} tokens; actual ${a?.calls ?? 0} calls, ${a?.promptTokens ?? 0} + ${a?.completionTokens ?? 0} tokens`);
    }
    console.log(
      `estimate vs actual (classes): calls ${estimate.total.calls.toFixed(1)} vs ${actual.calls}, prompt tokens ${estimate.total.promptTokens} vs ${actual.promptTokens}, completion tokens ${estimate.total.completionTokens} vs ${actual.completionTokens}, cost $${estimate.total.costUsd.toFixed(5)} vs $${actual.costUsd.toFixed(5)}`,
    );
    const within = (est: number, act: number) => Math.abs(est - act) / act;
    const tokens = (u: { promptTokens: number; completionTokens: number }) => u.promptTokens + u.completionTokens;
    expect(within(estimate.total.calls, actual.calls)).toBeLessThanOrEqual(0.3);
    expect(within(tokens(estimate.total), tokens(actual))).toBeLessThanOrEqual(0.3);
    expect(estimate.unpriced).toEqual([]);
    expect(within(estimate.total.costUsd, actual.costUsd)).toBeLessThanOrEqual(0.3);
  });
});

describe("the estimate of the demo's crawl (functions and classes, as npm run demo crawls)", () => {
  let factory: TestFactory;
  beforeAll(async () => {
    factory = await startTestFactory(loadLlmScript(DEMO_SCRIPTED_RESPONSES), {
      crawl: { targets: 'both' },
      llm: { prices: { 'scripted-test': { inputPerMTok: 2, outputPerMTok: 8 } } },
    });
  });
  afterAll(async () => {
    await factory?.close();
  });

  it('is within 30% in all, and its class steps within 30% of the class steps', async () => {
    const sources = [{ kind: 'local' as const, path: DEMO_REPO, name: 'textkit-demo' }];
    const { estimate } = await estimateCrawl(factory.config, sources);
    expect(estimate.targets.functions).toBeGreaterThan(0);
    expect(estimate.targets.classes).toBe(1);
    const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources, runId: 'it-estimate-demo' });
    const saved = JSON.parse(fs.readFileSync(path.join(summary.outDir, 'summary.json'), 'utf8')) as { llm: { total: Usage; byStep: Record<string, Usage> } };
    const sum = (rows: Usage[]) => rows.reduce((n, u) => ({ calls: n.calls + u.calls, promptTokens: n.promptTokens + u.promptTokens, completionTokens: n.completionTokens + u.completionTokens, costUsd: n.costUsd + u.costUsd }), { calls: 0, promptTokens: 0, completionTokens: 0, costUsd: 0 });
    const isClass = (step: string) => step.startsWith('class_');
    const parts = {
      all: { estimate: estimate.total, actual: saved.llm.total },
      classes: { estimate: sum(estimate.steps.filter((s) => isClass(s.step))), actual: sum(Object.entries(saved.llm.byStep).filter(([step]) => isClass(step)).map(([, u]) => u)) },
    };
    const within = (est: number, act: number) => Math.abs(est - act) / act;
    const tokens = (u: { promptTokens: number; completionTokens: number }) => u.promptTokens + u.completionTokens;
    for (const [name, { estimate: e, actual: a }] of Object.entries(parts)) {
      console.log(`estimate vs actual (${name}): calls ${e.calls.toFixed(1)} vs ${a.calls}, prompt tokens ${e.promptTokens} vs ${a.promptTokens}, completion tokens ${e.completionTokens} vs ${a.completionTokens}, cost $${e.costUsd.toFixed(5)} vs $${a.costUsd.toFixed(5)}`);
      expect(a.calls).toBeGreaterThan(0);
      expect(within(e.calls, a.calls)).toBeLessThanOrEqual(0.3);
      expect(within(tokens(e), tokens(a))).toBeLessThanOrEqual(0.3);
      expect(within(e.costUsd, a.costUsd)).toBeLessThanOrEqual(0.3);
    }
  });
});
