import { sandboxActivityBudgetMs } from '../../../activities/sandbox/budget';
import { LABELS } from '../../../activities/sandbox/container-spec';
import { leftoverAgeMs, staleContainers } from '../../../activities/sandbox/leftovers';
import { ConfigSchema } from '../../../temporal.config';

const sandbox = ConfigSchema.parse({}).sandbox;

describe('the sandbox activity budget', () => {
  test('covers every resolution round at the install limit and every run at the run limit', () => {
    // 3 rounds x 600 s + 4 runs x (120 + 10) s + 120 s margin
    expect(sandboxActivityBudgetMs(sandbox)).toBe((3 * 600 + 4 * 130 + 120) * 1000);
    const slow = { ...sandbox, timeoutSec: 600, packages: { ...sandbox.packages, resolutionRounds: 1, installTimeoutSec: 60 } };
    expect(sandboxActivityBudgetMs(slow)).toBe((60 + 2 * 610 + 120) * 1000);
  });
});

describe('leftover containers', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  const maxAgeMs = leftoverAgeMs(sandbox);
  const c = (id: string, worker: string, token: string, ageMs: number) => ({
    Id: id,
    Created: (now - ageMs) / 1000,
    Labels: { [LABELS.sandbox]: '1', [LABELS.worker]: worker, [LABELS.process]: token },
  });
  const me = { workerId: 'w1', processToken: 'hostA:100:1', host: 'hostA', now, maxAgeMs, processAlive: (pid: number) => pid === 200 };

  test('no live container outlives the sweep age: pool life plus the longest run or build, plus a margin', () => {
    expect(maxAgeMs).toBe((1800 + 600 + 300) * 1000);
  });

  test('by label, by dead process and by age, whatever the worker', () => {
    const stale = staleContainers(
      [
        c('mine', 'w1', 'hostA:100:1', 1000),
        c('my-earlier-process', 'w1', 'hostB:5:1', 1000),
        c('dead-local', 'w2', 'hostA:300:1', 1000),
        c('alive-local', 'w2', 'hostA:200:1', 1000),
        c('other-host-young', 'w3', 'hostC:1:1', maxAgeMs - 1000),
        c('other-host-old', 'w3', 'hostC:1:1', maxAgeMs + 1000),
      ],
      me,
    );
    expect(stale.map((s) => s.Id)).toEqual(['my-earlier-process', 'dead-local', 'other-host-old']);
  });
});
