import { slidingWindow } from '../../../workflows/window';

describe('slidingWindow', () => {
  it('never has more than `size` items in flight and keeps results in input order', async () => {
    let inFlight = 0;
    let peak = 0;
    const results = await slidingWindow([50, 10, 30, 5, 20, 1], 2, async (ms, i) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, ms));
      inFlight--;
      return i * 10;
    });
    expect(peak).toBe(2);
    expect(results).toEqual([0, 10, 20, 30, 40, 50]);
  });

  it('handles an empty list', async () => {
    expect(await slidingWindow([], 3, async () => 1)).toEqual([]);
  });
});
