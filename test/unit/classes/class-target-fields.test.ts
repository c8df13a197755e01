/**
 * A class target carries what a function target carries from its snapshot: a local git checkout's
 * commit date (its scripts' packages are resolved as of it) and where its license was read, from
 * the class listing to the class record (`commit_date`, `license_source`, packages with `as_of`).
 * The checkout is made in-process with isomorphic-git; the activities run outside Temporal.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as git from 'isomorphic-git';
import type { ClassRef, ExecutionSummary, FunctionOutcome, RunRef } from '../../../activities/contracts';
import { createIoActivities } from '../../../activities/io-activities';
import { freezeRunSettings } from '../../../activities/run-settings';
import { LocalStore } from '../../../activities/store/local';
import { loadConfig } from '../../../temporal.config';

/** 2023-03-14T09:30:00Z, in git's seconds. */
const COMMITTED = Date.UTC(2023, 2, 14, 9, 30) / 1000;

const ACCOUNT = `class Account:
    """A balance."""

    def __init__(self, balance=0):
        self.balance = balance

    def deposit(self, amount):
        if amount <= 0:
            raise ValueError("positive amounts only")
        self.balance += amount
        return self.balance

    def withdraw(self, amount):
        if amount > self.balance:
            raise ValueError("insufficient")
        self.balance -= amount
        return self.balance
`;

const MIT = `MIT License

Copyright (c) 2023 Dev

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`;

async function checkout(dir: string): Promise<string> {
  fs.mkdirSync(path.join(dir, 'bank'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'bank', 'account.py'), ACCOUNT);
  fs.writeFileSync(path.join(dir, 'LICENSE'), MIT);
  await git.init({ fs, dir, defaultBranch: 'main' });
  for (const filepath of ['bank/account.py', 'LICENSE']) await git.add({ fs, dir, filepath });
  const who = { name: 'Dev', email: 'dev@example.com', timestamp: COMMITTED, timezoneOffset: 0 };
  return git.commit({ fs, dir, message: 'first', author: who, committer: who });
}

describe('a class target from a git checkout', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'class-target-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('carries the commit date and the license source to its record', async () => {
    const dir = path.join(root, 'bank-repo');
    const sha = await checkout(dir);
    const dataDir = path.join(root, 'data');
    const store = new LocalStore(dataDir);
    const config = loadConfig({ env: {}, overrides: { dataDir, crawl: { targets: 'both' } } });
    const run: RunRef = { runId: 'classes-dated', settingsKey: await freezeRunSettings(store, config), storeId: await store.storeId() };
    const io = createIoActivities({ config, store });
    const source = { kind: 'local' as const, path: dir, name: 'bank' };

    const snap = await io.snapshotRepository({ run, source });
    if (!snap.ok) throw new Error(snap.reason);
    expect(snap.snapshot).toMatchObject({ commit: sha, commitDate: '2023-03-14T09:30:00.000Z', license: 'mit', licenseSource: 'file:LICENSE' });

    const listed = await io.listClassCandidates({ run, snapshot: snap.snapshot, index: 0, source });
    expect(listed.candidates).toBe(1);
    const [account] = await store.getJson<ClassRef[]>(listed.pageKeys[0]!);
    expect(account).toMatchObject({ kind: 'class', qualname: 'Account', commit: sha, commitDate: '2023-03-14T09:30:00.000Z', license: 'mit', licenseSource: 'file:LICENSE' });

    const prep = await io.prepareFunction({ run, fn: account! });
    if (!prep.ok) throw new Error(prep.reason);
    expect(prep.prepared.methods).toEqual(['__init__', 'deposit', 'withdraw']);

    const scriptKey = await store.put(`${ACCOUNT}\ndef test_deposit():\n    assert Account().deposit(1) == 1\n`);
    const execution: ExecutionSummary = {
      status: 'passed',
      exitCode: 0,
      durationMs: 1,
      resultKey: await store.putJson({ coverage: { summary: 'all', rate: 1, methods: [] } }),
      summary: 'passed',
      coverage: { branchCoverage: 1, lineCoverage: 1, hasBranches: true, missingLines: 0, missingBranches: 0 },
      packages: [{ name: 'attrs', version: '22.2.0', asOf: '2023-03-21T09:30:00.000Z' }],
    };
    const outcome: FunctionOutcome = { functionId: account!.functionId, path: account!.path, qualname: 'Account', accepted: true, stage: 'accepted', reason: 'ok', debugRounds: 0, coverageRounds: 0, branchCoverage: 1, tokens: 0 };
    const thresholds = { coverage: 0.8, astCheckRequired: false, mutationScore: null };
    await io.writeRecord({ run, fn: account!, thresholds, prepared: prep.prepared, outcome, scriptKey, execution, astEquivalent: true, functionality: null, testCorrectness: 'yes', promptVersions: {} });

    const stored = await store.getRecord(run.runId, account!.functionId);
    expect(stored).toMatchObject({ kind: 'class', accepted: true });
    if (!stored?.accepted || stored.kind !== 'class') throw new Error('no accepted class record');
    expect(stored.record).toMatchObject({
      class_name: 'Account',
      commit_id: sha,
      commit_date: '2023-03-14T09:30:00.000Z',
      license: 'mit',
      license_source: 'file:LICENSE',
      packages: [{ name: 'attrs', version: '22.2.0', as_of: '2023-03-21T09:30:00.000Z' }],
      methods: ['__init__', 'deposit', 'withdraw'],
      test_functions: ['test_deposit'],
    });
  });
});
