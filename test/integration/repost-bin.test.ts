/**
 * The `repost` command (package.json `bin`, bin/repost.js) runs the scripts as subcommands: the
 * same help, options and exit codes as `tsx scripts/<command>.ts`; an unknown command is refused
 * with the nearest one.
 */
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { usageOf } from '../../scripts/lib/cli';
import { cleanEnv, PROJECT_ROOT } from '../support/processes';

const BIN = path.join(PROJECT_ROOT, 'bin/repost.js');
const repost = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: PROJECT_ROOT, env: cleanEnv({}), encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

jest.setTimeout(300_000);

describe('repost <command>', () => {
  it('is the bin of the package', () => {
    expect(require(path.join(PROJECT_ROOT, 'package.json')).bin).toEqual({ repost: 'bin/repost.js' });
  });

  it('lists the commands for --help', () => {
    const r = repost('--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^usage: repost <command> \[options\]/);
    expect(r.stdout).toMatch(/commands: .*\bstart\b.*\bstatus\b/);
  });

  it("runs a script with its own options: its help, and its refusals", () => {
    expect(repost('status', '--help')).toEqual({ code: 0, stdout: usageOf(path.join(PROJECT_ROOT, 'scripts/status.ts')).replace(/\n*$/, '\n'), stderr: '' });
    expect(repost('status', '--no-such-flag')).toEqual({ code: 2, stdout: '', stderr: 'status: unknown option --no-such-flag (see --help)\n' });
  });

  it('refuses an unknown command with the nearest one', () => {
    expect(repost('strat', '--local', '.')).toEqual({ code: 2, stdout: '', stderr: 'repost: unknown command "strat"; did you mean start?\n' });
  });
});
