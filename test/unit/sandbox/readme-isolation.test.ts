/** The sandbox page (docs/sandbox.md) states the users and capabilities the containers really get (activities/sandbox/container-spec.ts). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { INIT_USER, runContainerOptions, SCRIPT_USER, sourceBuildContainerOptions, SUPERVISOR_CAPABILITIES, SUPERVISOR_USER } from '../../../activities/sandbox/container-spec';

const PAGE = fs.readFileSync(path.resolve(__dirname, '../../../docs/sandbox.md'), 'utf8');
const SECTION = PAGE.slice(0, PAGE.indexOf('\n## Packages\n'));
const NUMBER_WORDS = ['none', 'one', 'two', 'three', 'four', 'five', 'six'];
const uid = (user: string) => user.split(':')[0]!;
const limits = { memoryMb: 512, cpus: 1, pidsLimit: 64, scratchMb: 64 };

describe("the sandbox page's isolation part", () => {
  it('names the run container as it is made: root, every capability dropped but the supervisor\'s, and the uids it drops to', () => {
    expect(SECTION.length).toBeGreaterThan(1000);
    const run = runContainerOptions({ image: 'i', limits, envsDir: '/e', workerId: 'w', role: 'pool' });
    expect(run.User).toBe(SUPERVISOR_USER);
    expect(uid(SUPERVISOR_USER)).toBe('0');
    expect(run.HostConfig?.CapDrop).toEqual(['ALL']);
    expect(run.HostConfig?.CapAdd).toEqual(SUPERVISOR_CAPABILITIES);
    // The sentence that lists the kept capabilities lists exactly these, and counts them right.
    const kept = /every capability\s+dropped but (\w+) \(([^)]*)\)/.exec(SECTION);
    expect(kept).not.toBeNull();
    expect(kept![1]).toBe(NUMBER_WORDS[SUPERVISOR_CAPABILITIES.length]);
    expect([...kept![2]!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]).sort()).toEqual([...SUPERVISOR_CAPABILITIES].sort());
    expect(SECTION).toContain('starts as root');
    expect(SECTION).toContain(`uid ${uid(SCRIPT_USER)}`);
    expect(SECTION).toContain(`uid ${uid(INIT_USER)}`);
    expect(SECTION).not.toMatch(/non-root user with no capability/);
  });

  it('names the source build container as it is made', () => {
    const build = sourceBuildContainerOptions({ image: 'i', limits, envsDir: '/e', workerId: 'w', sourceDir: '/s', lifetimeSec: 60 });
    expect(build.User).toBe(INIT_USER);
    expect(build.HostConfig?.CapDrop).toEqual(['ALL']);
    expect(build.HostConfig?.CapAdd).toBeUndefined();
    expect(SECTION).toContain(`source build's container starts as uid ${uid(INIT_USER)}`);
  });
});
