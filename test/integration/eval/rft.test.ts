/**
 * Rejection-sampling training data from the demo dataset, through the real Temporal server,
 * sandbox and HTTP: passing samples and repaired ones are kept, copies of the ground truth (also
 * reformatted ones, caught by Python's `ast` round trip in the sandbox) are dropped, the SFT JSONL
 * loads with the Python `datasets` package, and the splits are kept apart.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseEvalDataset, type EvalRecord } from '../../../activities/eval/dataset';
import { SftExampleSchema } from '../../../activities/eval/sft';
import type { EvalSummary } from '../../../activities/eval/summary';
import { EvalRefusal, checkEval, runEval, startEval } from '../../../scripts/lib/eval-run';
import { fenced } from '../../support/eval-scripts';
import { startTestFactory, type TestFactory } from '../../support/factory';
import { DEMO_DATASET } from '../../support/fixtures';
import { runPythonWithDatasets } from '../../support/tools';

const records = parseEvalDataset(fs.readFileSync(DEMO_DATASET, 'utf8'));

/** Per function (scripted): a wrong answer, and a right one that differs from the ground truth. */
const VARIANTS: Record<string, { wrong: string; right: string }> = {
  'Interval.merge': {
    wrong: 'def merge(self, other):\n    return Interval(self.lo, other.hi)',
    right: [
      'def merge(self, other):',
      '    if max(self.lo, other.lo) > min(self.hi, other.hi):',
      '        raise ValueError("intervals do not overlap")',
      '    lo = self.lo if self.lo < other.lo else other.lo',
      '    hi = self.hi if self.hi > other.hi else other.hi',
      '    return Interval(lo, hi)',
    ].join('\n'),
  },
  word_frequencies: {
    wrong: 'def word_frequencies(text, top=None):\n    counts = {}\n    for w in text.lower().split():\n        counts[w] = counts.get(w, 0) + 1\n    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]',
    right: [
      'def word_frequencies(text, top=None):',
      '    from collections import Counter',
      '    words = (w.strip(".,;:!?\\"\'()") for w in text.lower().split())',
      '    counts = Counter(w for w in words if w)',
      '    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))',
      '    return ranked if top is None else ranked[:top]',
    ].join('\n'),
  },
  slugify: {
    wrong: 'def slugify(text, sep="-", max_length=None):\n    return text.lower().replace(" ", sep)',
    right: [
      'def slugify(text, sep="-", max_length=None):',
      '    words = ["".join(ch for ch in w if ch.isalnum()) for w in collapse_spaces(text.lower()).split(" ")]',
      '    slug = sep.join(w for w in words if w)',
      '    if max_length is not None and len(slug) > max_length:',
      '        slug = slug[:max_length].rstrip(sep)',
      '    return slug',
    ].join('\n'),
  },
};

/** The ground truth with its layout changed and a comment added: the same code to Python's `ast`. */
function reformatted(r: EvalRecord): string {
  const lines = r.origFunc.replace(/^\s+/, '').split('\n');
  const indent = /^\s*/.exec(r.origFunc)![0];
  return [`${lines[0]}  # same as before`, '', ...lines.slice(1).map((l) => l.slice(indent.length))].join('\n');
}

describe('rejection-sampling training data', () => {
  let factory: TestFactory;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-rft-'));

  beforeAll(async () => {
    factory = await startTestFactory(
      {
        rules: records.flatMap((r) => [
          // Three samples: the ground truth verbatim, reformatted, and a wrong answer (scripted).
          { kind: 'solve', functionName: r.qualname, responses: [fenced(r.origFunc), fenced(reformatted(r)), fenced(VARIANTS[r.qualname]!.wrong)] },
          { kind: 'repair', functionName: r.qualname, responses: [fenced(VARIANTS[r.qualname]!.right)] },
        ]),
      },
      { workers: { sandboxConcurrency: 2 } },
    );
  });

  afterAll(async () => {
    await factory?.close();
  });

  test('writes deduplicated SFT JSONL that the datasets package loads', async () => {
    const done = await runEval({ config: factory.config, client: factory.client, store: factory.store, datasetFile: DEMO_DATASET, settings: { task: 'rft', model: 'scripted-rft', n: 3, temperature: 0, repairRounds: 1 }, outDir: path.join(dir, 'rft') });
    expect(done.errors).toBe(0);
    const summary = JSON.parse(fs.readFileSync(path.join(done.outDir, 'eval-summary.json'), 'utf8')) as EvalSummary;
    // Per function: the ground truth and the repaired variant; the verbatim and the reformatted
    // copies of the ground truth are duplicates.
    expect(summary.training).toEqual({ functionsWithPassing: { initial: 3, afterRepair: 3 }, examples: 6, groundTruthExamples: 3, duplicates: 6, unparsable: 0 });
    const sftFile = path.join(done.outDir, 'sft.jsonl');
    const examples = fs.readFileSync(sftFile, 'utf8').trim().split('\n').map((l) => SftExampleSchema.parse(JSON.parse(l)));
    expect(examples.map((e) => [e.func_name, e.source]).sort()).toEqual(
      [...records.map((r) => [r.qualname, 'ground_truth']), ...records.map((r) => [r.qualname, 'repair'])].sort(),
    );
    for (const e of examples) {
      expect(e.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant']);
      expect(e.messages[0]!.content).not.toMatch(/^\[prompt:/m);
      expect(e.messages[1]!.content).not.toMatch(/^\[prompt:/m);
      expect(e.messages[1]!.content).toContain('...  # the body to implement');
    }
    const repaired = examples.find((e) => e.func_name === 'slugify' && e.source === 'repair')!;
    expect(repaired.messages[2]!.content).toBe(`\`\`\`python\n${VARIANTS.slugify!.right}\n\`\`\``);

    // The Python `datasets` package (installed by bootstrap.sh) loads the file as chat data.
    const loaded = await runPythonWithDatasets(
      [
        'import json, sys',
        'from datasets import load_dataset',
        "d = load_dataset('json', data_files=sys.argv[1], split='train')",
        "print(json.dumps({'rows': d.num_rows, 'columns': sorted(d.column_names), 'roles': [m['role'] for m in d[0]['messages']], 'sources': sorted(set(d['source']))}))",
      ].join('\n'),
      [sftFile],
    );
    expect(JSON.parse(loaded.trim().split('\n').pop()!)).toEqual({
      rows: 6,
      columns: ['func_name', 'function_id', 'messages', 'model', 'repo_name', 'round', 'sample', 'source'],
      roles: ['system', 'user', 'assistant'],
      sources: ['ground_truth', 'repair'],
    });
  });

  test('never makes training data from eval-split records; evaluating train-split records is allowed and said', async () => {
    // One record of the demo dataset (a train-split crawl) declared eval.
    const mixed = path.join(dir, 'mixed.jsonl');
    const lines = fs.readFileSync(DEMO_DATASET, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    fs.writeFileSync(mixed, lines.map((l, i) => JSON.stringify(i === 2 ? { ...l, split: 'eval' } : l)).join('\n') + '\n');
    const start = (datasetFile: string, task: 'eval' | 'rft', runId: string) =>
      startEval({ config: factory.config, client: factory.client, store: factory.store, datasetFile, settings: { task, model: 'scripted-rft' }, runId, outDir: path.join(dir, runId) });
    await expect(start(mixed, 'rft', 'rft-refused')).rejects.toThrow(EvalRefusal);
    await expect(start(mixed, 'rft', 'rft-refused')).rejects.toThrow(/1 of 3 record\(s\) belong to the eval split \(e\.g\. textkit-demo slugify\): training data is never made from them/);
    // Nothing was started: no run in the store, no output folder.
    expect(await factory.store.getRun('rft-refused')).toBeNull();
    expect(fs.existsSync(path.join(dir, 'rft-refused'))).toBe(false);
    // Evaluation on the same records is allowed; the train-split ones are noted.
    const checked = checkEval(factory.config, { datasetFile: mixed, settings: { task: 'eval' } });
    expect(checked.dataset.meta.splits).toEqual({ train: 2, eval: 1, none: 0 });
    expect(checked.notes).toEqual(['2 record(s) of the train split are evaluated: a model trained on them has seen these functions']);
  });
});
