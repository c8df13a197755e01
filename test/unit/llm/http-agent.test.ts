/**
 * The LLM client's HTTP agent: its timeouts follow the LLM timeout (`llm.timeoutSec`). The client
 * waiting on a slow endpoint for real is test/integration/llm/http-agent.test.ts.
 */
import { llmHttpTimeouts } from '../../../activities/llm/http-agent';

const MINUTE = 60_000;

describe('the HTTP agent of the LLM client', () => {
  it('takes its headers and body timeouts from the LLM timeout, never undici’s five-minute default', () => {
    const ninetyMinutes = llmHttpTimeouts(90 * 60);
    expect(ninetyMinutes.headersTimeout).toBeGreaterThanOrEqual(90 * MINUTE);
    expect(ninetyMinutes.bodyTimeout).toBeGreaterThanOrEqual(90 * MINUTE);
    const short = llmHttpTimeouts(5);
    expect(short.headersTimeout).toBeGreaterThanOrEqual(5_000);
    // The client's own timeout speaks first (a clear "timed out after N s (llm.timeoutSec)"), the agent's just after.
    expect(short.headersTimeout).toBeLessThan(90 * MINUTE);
    // Connecting is quick or it is not happening: bounded, and never longer than the request may take.
    expect(short.connectTimeout).toBeLessThanOrEqual(5_000);
    expect(ninetyMinutes.connectTimeout).toBeLessThanOrEqual(60_000);
  });
});
