/**
 * The mutation stage's activity across a change of its input: `scoreMutants` gained the mutants'
 * sample (`{ cap, seed }`, passed by the workflow from the run's pipeline settings). A task
 * scheduled by a workflow before that change (a retry, a resumed run replaying its history) still
 * carries the old input, without it: the activity then takes the sample from the run's frozen
 * configuration, as it did before. The sandbox's executor is a test double recording the
 * harness's request (no container here); the store, the run's frozen settings and the activity
 * are the real ones.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FunctionRef, PreparedFunction, RunRef } from '../../../activities/contracts';
import { freezeRunSettings } from '../../../activities/run-settings';
import type { SandboxExecutor, SandboxResult } from '../../../activities/sandbox';
import type { MutationSpec } from '../../../activities/sandbox/harness-command';
import { createSandboxActivities } from '../../../activities/sandbox-activities';
import { LocalStore } from '../../../activities/store/local';
import { loadConfig } from '../../../temporal.config';

const SCRIPT = `def clamp(x, lo, hi):
    return max(lo, min(x, hi))


def test_clamp():
    assert clamp(5, 0, 3) == clamp_new_implementation(5, 0, 3)
`;

/** A mutation run's result: the ground truth passed, two mutants made, one killed. */
function mutationResult(spec: MutationSpec): SandboxResult {
  return {
    status: 'passed',
    exitCode: 0,
    durationMs: 5,
    stdout: '',
    stderr: '',
    truncated: false,
    exception: null,
    coverage: null,
    packages: [],
    requirements: [],
    notes: [],
    mutation: {
      target: spec.target,
      mode: 'warm',
      candidates: 2,
      examined: 2,
      duplicates: 0,
      invalid: 0,
      leftOut: {},
      controlMs: 1,
      mutantTimeoutSec: 2,
      budgetSec: spec.budgetSec,
      warmStarts: 1,
      notes: [],
      mutants: [
        { operator: 'compare', line: 2, diff: '-min\n+max', outcome: 'killed', kind: 'AssertionError', ms: 1 },
        { operator: 'call', line: 2, diff: '-max\n+min', outcome: 'survived', kind: null, ms: 1 },
      ],
    },
  };
}

describe('scoreMutants', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'score-mutants-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  async function setUp() {
    const dataDir = path.join(root, 'data');
    const store = new LocalStore(dataDir);
    // The run froze a sample of its own (cap 7, seed 11), other than the defaults.
    const config = loadConfig({ env: {}, overrides: { dataDir, loops: { mutation: { enabled: true, cap: 7, seed: 11 } } } });
    const run: RunRef = { runId: 'mutation-inputs', settingsKey: await freezeRunSettings(store, config), storeId: await store.storeId() };
    const specs: MutationSpec[] = [];
    const executor = {
      config: { timeoutSec: 60 },
      mutate: async (_req: unknown, spec: MutationSpec) => {
        specs.push(spec);
        return mutationResult(spec);
      },
    } as unknown as SandboxExecutor;
    // The worker's own configuration has the defaults: the run's frozen settings must win.
    const activities = createSandboxActivities({ config: loadConfig({ env: {}, overrides: { dataDir } }), store, executor });
    const fn: FunctionRef = { functionId: 'f1', repoId: 'r', commit: 'c', path: 'clamp.py', qualname: 'clamp', name: 'clamp', split: 'train', license: 'mit' };
    const prepared: PreparedFunction = { sourceKey: await store.put('def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n'), contextKey: await store.put(''), crossFile: false, standalone: true, dependencyCount: 0, localModules: [] };
    const scriptKey = await store.put(SCRIPT);
    return { activities, specs, base: { run, fn, prepared, scriptKey, installs: [] } };
  }

  it("takes the workflow's sample when given", async () => {
    const { activities, specs, base } = await setUp();
    const score = await activities.scoreMutants({ ...base, sample: { cap: 3, seed: 5 } });
    expect(specs).toHaveLength(1);
    expect(specs[0]).toMatchObject({ target: 'clamp_new_implementation', cap: 3, seed: 5 });
    expect(score).toMatchObject({ status: 'scored', score: 0.5, made: 2, killed: 1, survived: 1 });
  });

  it("takes an input of the shape before the sample (a workflow started earlier): the run's frozen sample, the same score", async () => {
    const { activities, specs, base } = await setUp();
    // Exactly what such a workflow scheduled: no `sample` key at all.
    const old: Parameters<typeof activities.scoreMutants>[0] = { run: base.run, fn: base.fn, prepared: base.prepared, scriptKey: base.scriptKey, installs: base.installs };
    expect('sample' in old).toBe(false);
    const score = await activities.scoreMutants(old);
    expect(specs).toHaveLength(1);
    expect(specs[0]).toMatchObject({ target: 'clamp_new_implementation', cap: 7, seed: 11 });
    expect(score).toMatchObject({ status: 'scored', score: 0.5, made: 2, killed: 1, survived: 1 });
  });
});
