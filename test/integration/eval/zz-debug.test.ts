import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseEvalDataset } from '../../../activities/eval/dataset';
import { runEval } from '../../../scripts/lib/eval-run';
import { fenced, returnNone, rulesFor } from '../../support/eval-scripts';
import { startTestFactory, type TestFactory } from '../../support/factory';

const FILE = process.env.DBG_DATASET ?? '/tmp/stdlib-sample.jsonl';
const records = parseEvalDataset(fs.readFileSync(FILE, 'utf8'));

test('debug timing', async () => {
  const factory: TestFactory = await startTestFactory({ rules: rulesFor('solve', records, (r) => [fenced(r.origFunc), fenced(returnNone(r.origFunc))]) }, { workers: { sandboxConcurrency: 2 } });
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'dbg-'));
  let t0 = Date.now();
  const a = await runEval({ config: factory.config, client: factory.client, store: factory.store, datasetFile: FILE, settings: { model: 'm1', n: 2, ks: [1, 2], sampleWindow: 1 }, outDir: path.join(out, 'a') });
  console.log('combined n=2', Date.now() - t0, a.headline);
  t0 = Date.now();
  const b = await runEval({ config: factory.config, client: factory.client, store: factory.store, datasetFile: FILE, settings: { model: 'm2', n: 1 }, outDir: path.join(out, 'b') });
  const c = await runEval({ config: factory.config, client: factory.client, store: factory.store, datasetFile: FILE, settings: { model: 'm3', n: 1 }, outDir: path.join(out, 'c') });
  console.log('two runs n=1', Date.now() - t0, b.headline, c.headline);
  await factory.close();
}, 600000);
