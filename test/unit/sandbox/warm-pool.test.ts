/** The pool's bookkeeping, with opaque tokens standing for containers (it never looks inside them). */
import type Docker from 'dockerode';
import { WarmPool, lendableAfter } from '../../../activities/sandbox/warm-pool';

function tokens() {
  let next = 0;
  const created: string[] = [];
  const destroyed: string[] = [];
  return {
    created,
    destroyed,
    hooks: {
      create: async () => {
        const id = `c${next++}`;
        created.push(id);
        return id as unknown as Docker.Container;
      },
      destroy: async (c: Docker.Container) => {
        destroyed.push(c as unknown as string);
      },
    },
  };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('WarmPool', () => {
  test('reuses a returned container and never holds more than its size', async () => {
    const t = tokens();
    const pool = new WarmPool(t.hooks, 2, 10);
    await pool.warm();
    expect(t.created).toEqual(['c0', 'c1']);
    const a = await pool.acquire();
    pool.release(a, true);
    const b = await pool.acquire();
    expect(b.container).toBe(a.container);
    expect(b.runs).toBe(2);
    pool.release(b, true);
    expect(pool.containerCount).toBe(2);
    await pool.close();
    expect(t.destroyed.sort()).toEqual(['c0', 'c1']);
  });

  test('a third borrower waits for a container to come back', async () => {
    const t = tokens();
    const pool = new WarmPool(t.hooks, 2, 10);
    const a = await pool.acquire();
    await pool.acquire();
    let third: string | null = null;
    void pool.acquire().then((l) => (third = l.container as unknown as string));
    await flush();
    expect(third).toBeNull();
    pool.release(a, true);
    await flush();
    expect(third).toBe(a.container);
    await pool.close();
  });

  test('a container that is not reusable is destroyed and replaced', async () => {
    const t = tokens();
    const pool = new WarmPool(t.hooks, 1, 10);
    const a = await pool.acquire();
    pool.release(a, false);
    const b = await pool.acquire();
    expect(b.container).not.toBe(a.container);
    expect(t.destroyed).toEqual([a.container]);
    expect(pool.stats).toEqual({ created: 2, recycled: 1 });
    await pool.close();
  });

  test('a container is recycled after its run budget', async () => {
    const t = tokens();
    const pool = new WarmPool(t.hooks, 1, 3);
    const seen: unknown[] = [];
    for (let i = 0; i < 7; i++) {
      const l = await pool.acquire();
      seen.push(l.container);
      pool.release(l, true);
    }
    expect(seen).toEqual(['c0', 'c0', 'c0', 'c1', 'c1', 'c1', 'c2']);
    await pool.close();
    expect(t.destroyed.sort()).toEqual(['c0', 'c1', 'c2']);
  });

  test('a waiter can give up through its signal; close rejects the rest', async () => {
    const t = tokens();
    const pool = new WarmPool(t.hooks, 1, 10);
    await pool.acquire();
    const controller = new AbortController();
    const cancelled = pool.acquire(controller.signal);
    controller.abort();
    await expect(cancelled).rejects.toThrow(/cancelled/);
    const pending = pool.acquire();
    await pool.close();
    await expect(pending).rejects.toThrow(/closed/);
  });
});

describe('lendableAfter', () => {
  test('a run that ended normally gives its container back, passed or not', () => {
    expect(lendableAfter({ status: 'passed', exitCode: 0, resultRead: null })).toBe(true);
    expect(lendableAfter({ status: 'failed', exitCode: 1, resultRead: true })).toBe(true);
    expect(lendableAfter({ status: 'error', exitCode: 3, resultRead: true })).toBe(true);
  });

  test('a timeout, an OOM kill, a fault, a signal or a missing result: never lent again', () => {
    expect(lendableAfter({ status: 'timeout', exitCode: null, resultRead: true })).toBe(false);
    expect(lendableAfter({ status: 'oom', exitCode: 137, resultRead: true })).toBe(false);
    expect(lendableAfter({ status: 'infrastructure', exitCode: null, resultRead: null })).toBe(false);
    expect(lendableAfter({ status: 'error', exitCode: 137, resultRead: true })).toBe(false);
    expect(lendableAfter({ status: 'error', exitCode: 143, resultRead: true })).toBe(false);
    expect(lendableAfter({ status: 'error', exitCode: 1, resultRead: false })).toBe(false);
    expect(lendableAfter({ status: 'passed', exitCode: 0, resultRead: false })).toBe(false);
  });
});
