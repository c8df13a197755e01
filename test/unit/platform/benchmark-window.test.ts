import { IsoDaySchema, benchmarkRunId, benchmarkWindow } from '../../../activities/benchmark/window';

const DAY = 86_400_000;

describe('live benchmark windows', () => {
  it('a firing covers the days since the previous firing, without its own day', () => {
    const fired = new Date('2025-03-31T00:00:00Z');
    expect(benchmarkWindow(fired, 30 * DAY, '2024-09-01')).toEqual({ from: '2025-03-01', to: '2025-03-30' });
    // The next firing starts where this one ended: every day is searched once.
    expect(benchmarkWindow(new Date(fired.getTime() + 30 * DAY), 30 * DAY, '2024-09-01')).toEqual({ from: '2025-03-31', to: '2025-04-29' });
  });

  it('never reaches before the cutoff, and is empty when it lies before it', () => {
    expect(benchmarkWindow(new Date('2024-09-10T12:00:00Z'), 30 * DAY, '2024-09-01')).toEqual({ from: '2024-09-01', to: '2024-09-10' });
    expect(benchmarkWindow(new Date('2024-08-15T00:00:00Z'), 30 * DAY, '2024-09-01')).toBeNull();
  });

  it('a period under a day searches the current day', () => {
    expect(benchmarkWindow(new Date('2025-05-05T10:00:05Z'), 5000, '2025-01-01')).toEqual({ from: '2025-05-05', to: '2025-05-05' });
  });

  it('run ids follow the firing time, the same on a retry', () => {
    const at = new Date('2025-05-05T10:00:05.123Z');
    expect(benchmarkRunId('repost-benchmark-eval', at)).toBe('repost-benchmark-eval-20250505-100005');
    expect(benchmarkRunId('repost-benchmark-eval', new Date(at))).toBe(benchmarkRunId('repost-benchmark-eval', at));
  });

  it('cutoffs are calendar days', () => {
    expect(IsoDaySchema.safeParse('2024-09-01').success).toBe(true);
    expect(IsoDaySchema.safeParse('2024-13-45').success).toBe(false);
    expect(IsoDaySchema.safeParse('2023-02-29').success).toBe(false);
    expect(IsoDaySchema.safeParse('09/01/2024').success).toBe(false);
  });
});
