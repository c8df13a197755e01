/**
 * An evaluation over a record that lists surviving mutants (`mutation_survivors`, as a crawl with
 * the mutation stage writes it): a passing candidate equal to one of them is said to be, so a user
 * sees when a pass means little. Real Temporal server, sandbox and HTTP; scripted answers.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseEvalLines } from '../../../activities/eval/run-files';
import { survivorsText } from '../../../activities/sandbox/mutation';
import { runEval } from '../../../scripts/lib/eval-run';
import { fenced } from '../../support/eval-scripts';
import { startTestFactory, type TestFactory } from '../../support/factory';

const CLAMP = 'def clamp(x, lo, hi):\n    """Limit x to the closed range [lo, hi]."""\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n';
const TESTS = ['assert clamp(5, 0, 10) == clamp_new_implementation(5, 0, 10)', 'assert clamp(-1, 0, 10) == clamp_new_implementation(-1, 0, 10)', 'assert clamp(11, 0, 10) == clamp_new_implementation(11, 0, 10)'];
const SCRIPT = `${CLAMP}\n\ndef test_clamp():\n${TESTS.map((t) => `    ${t}`).join('\n')}\n\n\nif __name__ == "__main__":\n    test_clamp()\n`;

/** The boundary mutant no test can tell apart (at x == hi both return hi), as the harness writes its diff. */
const BOUNDARY = [
  '--- original',
  '+++ mutant',
  '@@ -3,5 +3,5 @@',
  '     if x < lo:',
  '         return lo',
  '-    if x > hi:',
  '+    if x >= hi:',
  '         return hi',
  '     return x',
].join('\n');
/** A mutant the tests above let through (clamp(0, 0, 10) is never asked). */
const LOW = [
  '--- original',
  '+++ mutant',
  '@@ -1,5 +1,5 @@',
  ' def clamp_new_implementation(x, lo, hi):',
  '     """Limit x to the closed range [lo, hi]."""',
  '-    if x < lo:',
  '+    if x <= lo:',
  '         return lo',
  '     if x > hi:',
].join('\n');

const RECORD = {
  func_name: 'clamp', idx: 'clamp', repo_name: 'scripted/numbers', func_path: 'numbers.py', orig_func: CLAMP, orig_context: `## numbers.py\n${CLAMP}`, eval_script: SCRIPT, commit_id: 'scripted',
  mutation_survivors: survivorsText('clamp', [{ operator: 'boundary', line: 5, diff: BOUNDARY }, { operator: 'boundary', line: 3, diff: LOW }]),
};

/** Scripted answers: the boundary mutant written in its own layout, a right clamp of another shape, a wrong one. */
const ANSWERS = [
  'def clamp(x, lo, hi):\n    # below the range\n    if x < lo:\n        return lo\n    if x >= hi:  # at or above\n        return hi\n    return x',
  'def clamp(x, lo, hi):\n    return max(lo, min(x, hi))',
  'def clamp(x, lo, hi):\n    return x',
];

describe('an evaluation over a record with surviving mutants', () => {
  let factory: TestFactory;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-eval-survivors-'));
  const datasetFile = path.join(dir, 'dataset.jsonl');
  fs.writeFileSync(datasetFile, `${JSON.stringify(RECORD)}\n`);

  beforeAll(async () => {
    factory = await startTestFactory({ rules: [{ kind: 'solve', functionName: 'clamp', responses: ANSWERS.map(fenced) }] });
  });
  afterAll(async () => {
    await factory?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('says which passing candidate equals a surviving mutant', async () => {
    const done = await runEval({ config: factory.config, client: factory.client, store: factory.store, datasetFile, settings: { model: 'scripted-survivors', n: 3, ks: [1], repairRounds: 0, timeoutSec: 5 }, outDir: path.join(dir, 'eval') });
    expect(done.errors).toBe(0);
    const [line] = parseEvalLines(fs.readFileSync(path.join(done.outDir, 'eval.jsonl'), 'utf8'));
    expect(line!.samples.map((s) => s.error ?? null)).toEqual([null, null, null]);
    const rounds = line!.samples.map((s) => s.rounds[0]!);
    const byCandidate = (fragment: string) => rounds.find((r) => r.candidate?.includes(fragment))!;
    expect(byCandidate('>= hi')).toMatchObject({ passed: true, equals_survivor: 'boundary, line 5' });
    expect(byCandidate('max(lo')).toMatchObject({ passed: true, equals_survivor: null });
    expect(rounds.filter((r) => !r.passed)).toHaveLength(1);
    expect(rounds.filter((r) => !r.passed)[0]!.equals_survivor).toBeNull();
    const summary = JSON.parse(fs.readFileSync(path.join(done.outDir, 'eval-summary.json'), 'utf8')) as { passesEqualToSurvivor: number };
    expect(summary.passesEqualToSurvivor).toBe(1);
  });
});
