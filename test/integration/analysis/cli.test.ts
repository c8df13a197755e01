/** scripts/analyze.ts: the JSON document of the issue, the readable summary, flag errors. */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');
const REPO = path.join(ROOT, 'test/fixtures/repos/webapp');
const cli = (args: string[]) => run(process.execPath, ['-r', 'tsx/cjs', 'scripts/analyze.ts', ...args], { cwd: ROOT, maxBuffer: 32 * 1024 * 1024 });

jest.setTimeout(60_000);

const Dependency = z.object({ path: z.string(), qualname: z.string(), kind: z.enum(['function', 'class', 'method', 'variable']), startLine: z.number(), endLine: z.number() });
const FunctionRow = z.object({
  path: z.string().regex(/^[^\\]+\.py$/),
  qualname: z.string(),
  kind: z.enum(['function', 'method']),
  startLine: z.number().int().positive(),
  endLine: z.number().int().positive(),
  kept: z.boolean(),
  droppedBy: z.string().nullable(),
  id: z.string().regex(/^[0-9a-f]{16}$/),
  standalone: z.boolean().optional(),
  dependencies: z.array(Dependency).optional(),
  unresolved: z.array(z.string()).optional(),
  context: z.string().optional(),
});
const Document = z.object({
  functions: z.array(FunctionRow),
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
  classes: z.array(z.object({ path: z.string(), qualname: z.string(), skeleton: z.string(), metrics: z.object({ methods: z.number() }) })).optional(),
});

describe('scripts/analyze.ts', () => {
  it('prints one JSON document with every function and the named one analysed', async () => {
    const { stdout } = await cli([REPO, '--function', 'app/services/users.py::UserService.list_users', '--classes', '--json']);
    const doc = Document.parse(JSON.parse(stdout));
    expect(doc.functions).toHaveLength(15);
    const target = doc.functions.find((f) => f.qualname === 'UserService.list_users')!;
    expect(target.standalone).toBe(false);
    expect(target.dependencies!.map((d) => `${d.path}::${d.qualname}`)).toContain('app/services/base.py::logged');
    expect(target.context!.startsWith('## ')).toBe(true);
    expect(target.context).toMatch(/## app\/services\/users\.py\n[\s\S]*def list_users/);
    // Only the named function carries the analysis.
    expect(doc.functions.filter((f) => f.context !== undefined)).toHaveLength(1);
    expect(doc.classes!.map((c) => c.qualname).sort()).toEqual(['Service', 'Session', 'Settings', 'UserService']);
  });

  it('analyses a dropped function when named', async () => {
    const { stdout } = await cli([REPO, '--function', 'app/db/session.py::session_scope', '--json']);
    const doc = Document.parse(JSON.parse(stdout));
    const f = doc.functions.find((x) => x.qualname === 'session_scope')!;
    expect(f.kept).toBe(false);
    expect(f.droppedBy).toBe('no-return');
    expect(f.dependencies!.map((d) => d.qualname)).toEqual(expect.arrayContaining(['Session']));
  });

  it('prints a readable summary without --json, and rejects bad flags', async () => {
    const { stdout } = await cli([REPO]);
    expect(stdout).toContain('8 Python files parsed, 0 skipped');
    expect(stdout).toContain('15 functions and methods, 8 kept');
    expect(stdout).toMatch(/- app\/services\/base\.py:22-23 Service\.__init__ {2}\[dunder\]/);
    await expect(cli([REPO, '--function', 'no-separator'])).rejects.toMatchObject({ code: 2 });
    await expect(cli([REPO, '--bogus'])).rejects.toMatchObject({ code: 2 });
    await expect(cli([REPO, '--function', 'app/config.py::missing'])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('no function missing in app/config.py') });
  });
});
