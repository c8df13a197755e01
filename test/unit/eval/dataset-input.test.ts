/**
 * `eval.ts --dataset` takes a folder too: a run's folder is read as its dataset.jsonl, and a folder
 * that is neither a run's nor an export's is refused, naming what it lacks. (The export's Parquet
 * files are read by a library that loads as an ES module: test/integration/eval/cli.test.ts
 * evaluates an export folder and its Parquet file against the JSON Lines they came from.)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EvalRefusal, loadDataset, readDatasetInput } from '../../../scripts/lib/eval-run';
import { DEMO_DATASET } from '../../support/fixtures';

describe('the dataset an evaluation reads', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-dataset-input-'));

  it("reads a run's folder as its dataset.jsonl", async () => {
    const runDir = fs.mkdtempSync(path.join(root, 'run-'));
    fs.copyFileSync(DEMO_DATASET, path.join(runDir, 'dataset.jsonl'));
    const input = await readDatasetInput(runDir);
    expect(input).toEqual({ file: path.join(runDir, 'dataset.jsonl') });
    expect(loadDataset(input.file).records).toEqual(loadDataset(DEMO_DATASET).records);
  });

  it('refuses a folder holding neither a dataset.jsonl nor Parquet splits, and a path that is not there', async () => {
    const empty = fs.mkdtempSync(path.join(root, 'empty-'));
    await expect(readDatasetInput(empty)).rejects.toThrow(new EvalRefusal(`${empty} is a folder holding neither dataset.jsonl (a run's folder) nor data/train-*.parquet or data/eval-*.parquet (an export's folder)`));
    await expect(readDatasetInput(path.join(root, 'missing.parquet'))).rejects.toThrow(new EvalRefusal(`dataset ${path.join(root, 'missing.parquet')} does not exist`));
    // A folder handed to loadDataset directly is refused with words, not EISDIR.
    expect(() => loadDataset(empty)).toThrow(EvalRefusal);
  });
});
