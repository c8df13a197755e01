import type { LimiterClock } from '../../activities/llm/rate-limiter';

/** A clock that only moves when someone sleeps, so limiter timing is exact and instant. */
export function fakeClock(): LimiterClock & { t: number } {
  const clock = {
    t: 0,
    now: () => clock.t,
    sleep: async (ms: number) => {
      clock.t += ms;
    },
  };
  return clock;
}
