/**
 * `scripts/eval.ts` and `scripts/rft.ts` as a user runs them, each in its own process, on the
 * test's Temporal server with workers in the process, real containers, and a scripted model
 * served over HTTP (`--scripted`).
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { ArtifactStore } from '../../../activities/artifacts/store';
import { parseEvalDataset } from '../../../activities/eval/dataset';
import { parseEvalLines } from '../../../activities/eval/run-files';
import { listExchanges, type ExchangeRecord } from '../../../activities/llm';
import { fenced, rulesFor } from '../../support/eval-scripts';
import { requireEnv } from '../../support/factory';
import { DEMO_DATASET } from '../../support/fixtures';

const exec = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');

async function cli(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['-r', 'tsx/cjs', script, ...args], { cwd: ROOT, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('tsx scripts/eval.ts and scripts/rft.ts', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-eval-cli-'));
  const env = { TEMPORAL_ADDRESS: requireEnv('REPOST_TEST_TEMPORAL_ADDRESS'), REPOST_DATA_DIR: dataDir, REPOST_SANDBOX_IMAGE: requireEnv('REPOST_TEST_SANDBOX_IMAGE') };
  const fixture = path.join(dataDir, 'ground-truth.json');
  const records = parseEvalDataset(fs.readFileSync(DEMO_DATASET, 'utf8'));
  fs.writeFileSync(
    fixture,
    JSON.stringify({
      description: 'scripted: each function answered with its ground truth; docstrings written on the second try',
      rules: [...rulesFor('solve', records, (r) => [fenced(r.origFunc)]), { kind: 'docstring', responses: ['', 'Scripted docstring of {{functionName}}.'] }],
    }),
  );

  it('evaluates, prints the numbers, combines reports, and rft then refuses the evaluated repository', async () => {
    const out = path.join(dataDir, 'run');
    const ran = await cli('scripts/eval.ts', ['--dataset', DEMO_DATASET, '--scripted', fixture, '--n', '2', '--k', '1,2', '--docstring', 'generated', '--out', out], env);
    expect({ code: ran.code, stderr: ran.code ? ran.stderr : '' }).toEqual({ code: 0, stderr: '' });
    expect(ran.stdout).toContain('3 of 3 function(s) evaluated, 6 sample(s) of scripted');
    expect(ran.stdout).toContain('Pass@k: pass@1 100.0%, pass@2 100.0%');
    for (const f of ['eval.jsonl', 'eval-summary.json', 'eval-report.html', 'eval-run.json']) expect(fs.existsSync(path.join(out, f))).toBe(true);
    // Generated docstrings: an empty answer is asked again; the second one is in the solve prompt.
    const lines = parseEvalLines(fs.readFileSync(path.join(out, 'eval.jsonl'), 'utf8'));
    for (const l of lines) {
      expect(l.docstring).toBe('generated');
      expect(l.usage_by_step.docstring!.calls).toBe(2);
      const solve = (await listExchanges(dataDir, l.function_id)).find((e) => e.step === 'solve')!;
      const exchange = (await new ArtifactStore(path.join(dataDir, 'artifacts')).getJson<ExchangeRecord>(solve.exchangeKey));
      expect(exchange.request.messages[1]!.content).toContain(`"""Scripted docstring of ${l.func_name}."""`);
    }

    const combined = path.join(dataDir, 'combined.html');
    const report = await cli('scripts/eval.ts', ['--report', combined, out, out], env);
    expect(report.code).toBe(0);
    expect(fs.readFileSync(combined, 'utf8')).toContain('2 run(s)');

    const refused = await cli('scripts/rft.ts', ['--dataset', DEMO_DATASET, '--scripted', fixture], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^refused: 1 repository of this dataset was already used for eval \(e\.g\. textkit-demo/);
  });

  it('rejects bad flags with exit code 2 and a message', async () => {
    const bad = await cli('scripts/eval.ts', ['--dataset', DEMO_DATASET, '--select', 'best'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--select: Invalid option/);
    const missing = await cli('scripts/eval.ts', ['--dataset', path.join(dataDir, 'nope.jsonl')], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/refused: .*nope\.jsonl does not exist/);
    const help = await cli('scripts/rft.ts', ['--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Rejection-sampling fine-tuning data');
  });
});
