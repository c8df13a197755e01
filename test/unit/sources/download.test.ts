/**
 * A download's retries against its deadline, on an injected clock: which failures are retried,
 * how long the waits are, and that no wait is begun that would end past the deadline (the HTTP
 * side, against a local server: test/integration/sources/github.test.ts).
 */
import {
  DO_NOT_RETRY,
  DownloadDeadline,
  DownloadRefused,
  REFUSED_HEADER,
  isTransientFailure,
  rateLimitRetryAllowed,
  withRetries,
  withinDeadline,
  type DownloadClock,
} from '../../../activities/sources/download';

/** A clock that moves only when a wait or an attempt moves it; it records every wait. */
function testClock(): DownloadClock & { t: number; waits: { at: number; ms: number }[] } {
  const clock = {
    t: 0,
    waits: [] as { at: number; ms: number }[],
    now: () => clock.t,
    sleep: async (ms: number) => {
      clock.waits.push({ at: clock.t, ms });
      clock.t += ms;
    },
  };
  return clock;
}

const httpError = (status: number) => Object.assign(new Error(`HTTP ${status}`), { status });

describe('isTransientFailure', () => {
  it('retries server errors, 429 and network failures; never a client error, a refusal or an abort', () => {
    for (const status of [500, 502, 503, 504, 429]) expect(isTransientFailure(httpError(status))).toBe(true);
    for (const status of DO_NOT_RETRY) expect(isTransientFailure(httpError(status))).toBe(false);
    expect(isTransientFailure(Object.assign(new TypeError('terminated'), { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) }))).toBe(true);
    expect(isTransientFailure(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isTransientFailure(new DownloadRefused('larger than 10 bytes: refused'))).toBe(false);
    const refusedByGuard = Object.assign(httpError(400), { response: { headers: { [REFUSED_HEADER]: '1' }, data: { message: 'refused http URL' } } });
    expect(isTransientFailure(refusedByGuard)).toBe(false);
    expect(isTransientFailure(Object.assign(new Error('This operation was aborted'), { name: 'AbortError', status: 500 }))).toBe(false);
    expect(isTransientFailure(new Error('a bug'))).toBe(false);
    expect(isTransientFailure(null)).toBe(false);
  });
});

describe('withRetries', () => {
  it('retries transient failures with waits of 1, 4, 9 units, then answers', async () => {
    const clock = testClock();
    const deadline = new DownloadDeadline(60_000, clock);
    let attempts = 0;
    const result = await withRetries(
      async () => {
        attempts++;
        if (attempts < 4) throw httpError(502);
        return 'tarball';
      },
      { retries: 3, unitMs: 100, deadline, clock },
    );
    expect(result).toBe('tarball');
    expect(attempts).toBe(4);
    expect(clock.waits.map((w) => w.ms)).toEqual([100, 400, 900]);
  });

  it('gives up with the last failure once the retries are spent', async () => {
    const clock = testClock();
    let attempts = 0;
    const run = withRetries(
      async () => {
        attempts++;
        throw httpError(503);
      },
      { retries: 2, unitMs: 10, deadline: new DownloadDeadline(60_000, clock), clock },
    );
    await expect(run).rejects.toMatchObject({ status: 503 });
    expect(attempts).toBe(3);
  });

  it('never retries a client error or a refusal: one attempt, no wait', async () => {
    for (const failure of [...DO_NOT_RETRY.map(httpError), new DownloadRefused('larger than the cap: refused')]) {
      const clock = testClock();
      let attempts = 0;
      const run = withRetries(
        async () => {
          attempts++;
          throw failure;
        },
        { retries: 5, unitMs: 10, deadline: new DownloadDeadline(60_000, clock), clock },
      );
      await expect(run).rejects.toBe(failure);
      expect(attempts).toBe(1);
      expect(clock.waits).toEqual([]);
    }
  });

  it('does not begin a wait that would end at or past the deadline: refused at once, with the reason', async () => {
    const clock = testClock();
    const deadline = new DownloadDeadline(5_000, clock);
    let attempts = 0;
    const run = withRetries(
      async () => {
        attempts++;
        throw httpError(502);
      },
      { retries: 10, unitMs: 1_000, deadline, clock },
    );
    // Wait 1 s (ends at 1 s), then a wait of 4 s would end at 5 s, the deadline itself.
    await expect(run).rejects.toThrow('not downloaded within 5 s (crawl.github.downloadTimeoutSec): refused (HTTP 502; a retry in 4 s would start past it)');
    expect(attempts).toBe(2);
    expect(clock.waits).toEqual([{ at: 0, ms: 1_000 }]);
    expect(deadline.refused).toBeInstanceOf(DownloadRefused);
  });

  it('keeps every wait inside the deadline, however long the attempts take', async () => {
    for (const [deadlineMs, attemptMs, unitMs] of [
      [10_000, 0, 1_000],
      [10_000, 1_500, 500],
      [30_000, 7_000, 1_000],
      [3_000, 2_999, 1],
      [1_000, 0, 2_000],
    ] as const) {
      const clock = testClock();
      const deadline = new DownloadDeadline(deadlineMs, clock);
      const starts: number[] = [];
      const run = withRetries(
        async () => {
          starts.push(clock.t);
          clock.t += attemptMs;
          throw httpError(500);
        },
        { retries: 20, unitMs, deadline, clock },
      );
      await expect(run).rejects.toThrow(DownloadRefused);
      for (const w of clock.waits) expect(w.at + w.ms).toBeLessThan(deadlineMs);
      // Every attempt after the first starts when a wait ends, before the deadline.
      for (const s of starts) expect(s).toBeLessThan(deadlineMs);
      expect(starts).toHaveLength(clock.waits.length + 1);
    }
  });

  it('answers with the deadline once its signal fired: a failure after it, or a wait it ends', async () => {
    const clock = testClock();
    const deadline = new DownloadDeadline(60_000, clock);
    const fired = new AbortController();
    const late = withRetries(
      async () => {
        fired.abort();
        throw Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
      },
      { retries: 3, unitMs: 10, deadline, clock, signal: fired.signal },
    );
    await expect(late).rejects.toThrow('not downloaded within 60 s (crawl.github.downloadTimeoutSec): refused');

    // The signal fires during a wait: the wait ends there and no attempt follows.
    const during = new AbortController();
    const abortingClock: DownloadClock = {
      now: () => 0,
      sleep: async (_ms, signal) => {
        during.abort();
        throw signal?.reason;
      },
    };
    let attempts = 0;
    const waited = withRetries(
      async () => {
        attempts++;
        throw httpError(502);
      },
      { retries: 3, unitMs: 10, deadline: new DownloadDeadline(60_000, abortingClock), clock: abortingClock, signal: during.signal },
    );
    await expect(waited).rejects.toThrow('not downloaded within 60 s (crawl.github.downloadTimeoutSec): refused');
    expect(attempts).toBe(1);
  });
});

describe('rate limits against the deadline', () => {
  it('lets the throttling wait only within its retries and before the deadline; a refused wait is the answer', async () => {
    const clock = testClock();
    const deadline = new DownloadDeadline(10_000, clock);
    expect(rateLimitRetryAllowed(0, 3, 2_000, deadline)).toBe(true);
    expect(rateLimitRetryAllowed(3, 3, 2_000, deadline)).toBe(false);
    expect(deadline.refused).toBeNull();
    // Requests without a deadline (search, pinning) keep the throttling's own rule.
    expect(rateLimitRetryAllowed(0, 3, 3_600_000)).toBe(true);
    // A reset an hour away: not waited for, and the 403 that follows becomes the deadline's refusal.
    expect(rateLimitRetryAllowed(0, 3, 3_600_000, deadline)).toBe(false);
    let attempts = 0;
    const run = withRetries(
      async () => {
        attempts++;
        throw httpError(403);
      },
      { retries: 3, unitMs: 10, deadline, clock },
    );
    await expect(run).rejects.toThrow('not downloaded within 10 s (crawl.github.downloadTimeoutSec): refused (rate limited; a retry in 3600 s would start past it)');
    expect(attempts).toBe(1);
  });
});

describe('withinDeadline', () => {
  it('answers with the refusal when the signal fires, whatever the work is still waiting for', async () => {
    const clock = testClock();
    const deadline = new DownloadDeadline(1_000, clock);
    const fired = new AbortController();
    const never = new Promise<string>(() => undefined);
    const run = withinDeadline(never, fired.signal, deadline);
    fired.abort();
    await expect(run).rejects.toThrow('not downloaded within 1 s (crawl.github.downloadTimeoutSec): refused');
    // Already fired: refused without waiting on the work.
    await expect(withinDeadline(never, fired.signal, deadline)).rejects.toThrow(DownloadRefused);
  });

  it("passes the work's answer or failure through before the deadline", async () => {
    const deadline = new DownloadDeadline(1_000, testClock());
    const signal = new AbortController().signal;
    await expect(withinDeadline(Promise.resolve('tarball'), signal, deadline)).resolves.toBe('tarball');
    await expect(withinDeadline(Promise.reject(httpError(404)), signal, deadline)).rejects.toMatchObject({ status: 404 });
  });
});
