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

/** Timers that fire only when the test moves the clock on (`advance`), in due order. */
export function fakeTimers(): { after(ms: number, fn: () => void): () => void; advance(ms: number): void; readonly pending: number; t: number } {
  let seq = 0;
  const due: { at: number; seq: number; fn: () => void }[] = [];
  const timers = {
    t: 0,
    after(ms: number, fn: () => void) {
      const entry = { at: timers.t + ms, seq: seq++, fn };
      due.push(entry);
      return () => {
        const i = due.indexOf(entry);
        if (i >= 0) due.splice(i, 1);
      };
    },
    advance(ms: number) {
      const until = timers.t + ms;
      for (;;) {
        due.sort((a, b) => a.at - b.at || a.seq - b.seq);
        const next = due[0];
        if (!next || next.at > until) break;
        due.shift();
        timers.t = next.at;
        next.fn();
      }
      timers.t = until;
    },
    get pending() {
      return due.length;
    },
  };
  return timers;
}
