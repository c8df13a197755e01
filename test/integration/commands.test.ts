/**
 * Every command-line script, each in its own process, goes through the one runner
 * (scripts/lib/cli.ts): `--help` prints the script's header comment and exits 0; an unknown flag
 * exits 2 with one line in the one error format, `<command>: unknown option --... (see --help)`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { commandName, usageOf } from '../../scripts/lib/cli';
import { cleanEnv, PROJECT_ROOT, runScript } from '../support/processes';

/** The files that run as commands: the scripts, the benchmarks, the worker process, and the library's standalone entry points. */
function commandFiles(): string[] {
  const inDir = (dir: string) => fs.readdirSync(path.join(PROJECT_ROOT, dir)).filter((f) => f.endsWith('.ts')).map((f) => `${dir}/${f}`);
  const library = [...inDir('scripts/lib'), ...inDir('scripts/scripted-llm')].filter((f) => /\brunCommand\(/.test(fs.readFileSync(path.join(PROJECT_ROOT, f), 'utf8')) && !f.endsWith('/cli.ts'));
  return [...inDir('scripts'), ...inDir('scripts/bench'), ...inDir('workers'), ...library].sort();
}

/** Runs each file (a few at a time: each process loads its imports). */
async function eachCommand<T>(files: string[], args: string[], check: (file: string, r: { code: number | null; stdout: string; stderr: string }) => T): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < files.length; i += 4) {
    const batch = files.slice(i, i + 4);
    const results = await Promise.all(batch.map((f) => runScript(f, args, { env: cleanEnv({}), exactEnv: true, timeoutMs: 120_000 })));
    results.forEach((r, j) => out.push(check(batch[j]!, r)));
  }
  return out;
}

jest.setTimeout(600_000);

describe('every command-line script', () => {
  const files = commandFiles();

  it('is found (the scripts, the benchmarks, the worker)', () => {
    expect(files).toEqual(expect.arrayContaining(['scripts/start.ts', 'scripts/eval.ts', 'scripts/bench.ts', 'scripts/bench/crawl.ts', 'workers/main.ts', 'scripts/scripted-llm/server.ts']));
  });

  it('prints its header comment for --help and exits 0', async () => {
    const rows = await eachCommand(files, ['--help'], (file, r) => ({ file, code: r.code, help: r.stdout === usageOf(path.join(PROJECT_ROOT, file)).replace(/\n*$/, '\n'), stderr: r.stderr }));
    expect(rows).toEqual(files.map((file) => ({ file, code: 0, help: true, stderr: '' })));
  });

  it('refuses an unknown flag with exit code 2 and one line in the common format', async () => {
    const rows = await eachCommand(files, ['--no-such-flag'], (file, r) => ({ file, code: r.code, stdout: r.stdout, stderr: r.stderr }));
    expect(rows).toEqual(files.map((file) => ({ file, code: 2, stdout: '', stderr: `${commandName(path.join(PROJECT_ROOT, file))}: unknown option --no-such-flag (see --help)\n` })));
  });

  it('refuses a run id that is no run id wherever one enters, with exit code 2 and nothing started', async () => {
    const bad = '../elsewhere';
    const calls: [string, string[]][] = [
      ['scripts/status.ts', [bad]],
      ['scripts/start.ts', ['--run-id', bad, '--resume']],
      ['scripts/start.ts', ['--attach', bad]],
      ['scripts/replay.ts', ['--run', bad]],
      ['scripts/eval.ts', ['--dataset', 'none.jsonl', '--run-id', bad]],
      ['scripts/rft.ts', ['--dataset', 'none.jsonl', '--run-id', bad]],
    ];
    const rows = [];
    for (const [file, args] of calls) {
      const r = await runScript(file, args, { env: cleanEnv({}), exactEnv: true, timeoutMs: 120_000 });
      rows.push({ file, code: r.code, stdout: r.stdout, refused: r.stderr.startsWith(`${commandName(path.join(PROJECT_ROOT, file))}: `) && r.stderr.includes(`not a run id: "${bad}"`) && r.stderr.includes('(see --help)') });
    }
    expect(rows).toEqual(calls.map(([file]) => ({ file, code: 2, stdout: '', refused: true })));
  });
});
