/**
 * The harness never fails a right answer, through the real Temporal server, sandbox and HTTP: an
 * answer that imports the repository's own module (as the prompt's module does) passes on an
 * environment whose script defines that module's names; the same answer with a wrong body fails
 * as `assertion`; an answer that imports a name the script lacks is the harness's failure, left
 * out of Pass@k. The answers are scripted (an LLM fixture), the runs real.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseEvalLines } from '../../../activities/eval/run-files';
import type { EvalSummary } from '../../../activities/eval/summary';
import { runEval } from '../../../scripts/lib/eval-run';
import { fenced } from '../../support/eval-scripts';
import { startTestFactory, type TestFactory } from '../../support/factory';

const LOG_MODULE = 'class Logger:\n    def __init__(self):\n        self.lines = []\n\n    def info(self, msg):\n        self.lines.append(msg)\n\n\nLOG = Logger()\n';
const SHOUT = 'def shout(text):\n    """Log the text, then return it in upper case."""\n    LOG.info(text)\n    return text.upper()\n';

/** A record of a repository whose `logic/log.py` provides LOG; the script defines LOG itself. */
const RECORD = {
  func_name: 'shout',
  idx: 'shout',
  repo_name: 'scripted/logic',
  func_path: 'logic/handlers.py',
  orig_func: SHOUT,
  orig_context: `## logic/log.py\n${LOG_MODULE}\n## logic/handlers.py\nfrom logic.log import LOG\n\n\n${SHOUT}`,
  eval_script: `${LOG_MODULE}\n\n${SHOUT}\n\ndef test_shout():\n    for text in ["a", "Mixed Case", ""]:\n        assert shout(text) == shout_new_implementation(text)\n\n\nif __name__ == "__main__":\n    test_shout()\n`,
  commit_id: 'scripted',
};

/** Scripted answers (an LLM fixture): the import as the repository writes it, with a right body, a wrong body, and a name the script lacks. */
const ANSWERS = [
  fenced('from logic.log import LOG\n\n\ndef shout(text):\n    LOG.info(text)\n    return text.upper()'),
  fenced('from logic.log import LOG\n\n\ndef shout(text):\n    LOG.info(text)\n    return text.lower()'),
  fenced('from logic.log import LOG\nfrom logic.text import loud\n\n\ndef shout(text):\n    LOG.info(text)\n    return loud(text)'),
];

describe("a candidate importing the repository's own module", () => {
  let factory: TestFactory;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-eval-harness-'));
  const datasetFile = path.join(dir, 'dataset.jsonl');
  fs.writeFileSync(datasetFile, JSON.stringify(RECORD) + '\n');

  beforeAll(async () => {
    factory = await startTestFactory({ rules: [{ kind: 'solve', functionName: 'shout', responses: ANSWERS }] });
  });
  afterAll(async () => {
    await factory?.close();
  });

  test('passes with a right body, fails as assertion with a wrong one, and a name the script lacks is the harness failure, left out of Pass@k', async () => {
    const done = await runEval({ config: factory.config, client: factory.client, store: factory.store, datasetFile, settings: { model: 'scripted-harness', n: 3, ks: [1], timeoutSec: 20 }, outDir: path.join(dir, 'eval') });
    expect(done.errors).toBe(0);
    const [line] = parseEvalLines(fs.readFileSync(path.join(done.outDir, 'eval.jsonl'), 'utf8'));
    // Samples run side by side: each answer is found by its body.
    const first = line!.samples.map((s) => s.rounds[0]!);
    const by = (body: string) => first.find((r) => r.candidate?.includes(body))!;
    expect([by('text.upper()'), by('text.lower()'), by('loud(text)')].map((r) => [r.passed, r.kind])).toEqual([
      [true, null],
      [false, 'assertion'],
      [false, 'harness'],
    ]);
    // The repository's import was left out of each preamble, and said so.
    for (const r of first) expect(r.dropped_imports[0]).toBe('from logic.log import LOG: left out LOG (the script defines it)');
    expect(by('loud(text)').dropped_imports[1]).toMatch(/^from logic\.text import loud: left out loud \(from the repository's own modules/);
    expect(by('loud(text)').summary).toBe('the candidate imports loud from the repository, and the evaluation script does not define it');
    // The harness's failure is not the model's: n counts the two the model answered for.
    expect(line!.n).toBe(2);
    expect(line!.harness_failures).toBe(1);
    expect(line!.pass_at_k['pass@1']).toBe(0.5);
    const summary = JSON.parse(fs.readFileSync(path.join(done.outDir, 'eval-summary.json'), 'utf8')) as EvalSummary;
    expect(summary.passAtK['pass@1']).toBe(0.5);
    expect(summary.samples).toBe(2);
    expect(summary.harness).toMatchObject({ samples: 1, repairRounds: 0, functions: 1, samplesWithDroppedImports: 3 });
    expect(summary.failureKinds.initial).toMatchObject({ assertion: 1, harness: 1, exception: 0 });
    const report = fs.readFileSync(path.join(done.outDir, 'eval-report.html'), 'utf8');
    expect(report).toContain('<h2>Harness</h2>');
    expect(report).toContain('the harness failed 1 sample(s) (left out of Pass@k)');
    // The prompt told the model the repository's names are there as shown.
    const solve = factory.llm.requests.find((r) => r.kind === 'solve')!;
    expect(solve.messages[1]!.content).toContain("The names the CODE defines or imports from the repository's own modules are available to your implementation as shown");
  });
});
