/**
 * The HTTP client under the `openai` package. Left to itself, the package sends its requests
 * through the process's `fetch`, whose HTTP agent (undici's) gives up on a response whose headers
 * or body take more than five minutes, whatever timeout the client was given. An endpoint that
 * thinks longer than that (a local model on a CPU, a busy server) would never be heard. So every
 * OpenAI client is made here, with undici's `fetch` and an agent whose timeouts follow the LLM
 * timeout (`llm.timeoutSec`) of the run that calls.
 */
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';

/**
 * The agent's timeouts, in milliseconds (undici's unit), for an LLM timeout of `timeoutSec`
 * seconds. Headers and body may take as long as the request may, plus a little, so the client's
 * own timeout ends a request first (and says "timed out after N s (llm.timeoutSec)"); connecting is bounded on its
 * own, and never longer than the request.
 */
export function llmHttpTimeouts(timeoutSec: number): { headersTimeout: number; bodyTimeout: number; connectTimeout: number } {
  const ms = Math.max(1, Math.ceil(timeoutSec * 1000));
  const slack = Math.min(10_000, ms);
  return { headersTimeout: ms + slack, bodyTimeout: ms + slack, connectTimeout: Math.min(ms, 30_000) };
}

/**
 * One agent per timeout in use, shared by the process's clients (connections are pooled per
 * agent). A process sees few distinct timeouts (its own and its runs'); an idle agent holds no
 * connection for long (undici closes idle ones after seconds), so none is ever closed here.
 */
const agents = new Map<number, Agent>();

/** The process's HTTP agent for LLM requests with this timeout (seconds). */
export function llmHttpAgent(timeoutSec: number): Agent {
  let agent = agents.get(timeoutSec);
  if (agent) return agent;
  const t = llmHttpTimeouts(timeoutSec);
  agent = new Agent({ headersTimeout: t.headersTimeout, bodyTimeout: t.bodyTimeout, connect: { timeout: t.connectTimeout } });
  agents.set(timeoutSec, agent);
  return agent;
}

export interface OpenAiClientOptions {
  baseUrl: string;
  apiKey: string;
  /** The LLM timeout in seconds (the run's `llm.timeoutSec`): the client's and its HTTP agent's. */
  timeoutSec: number;
}

/**
 * The one way to make an OpenAI client. Its own retries are off: retrying is Temporal's job, one
 * activity attempt is one HTTP request, visible in the history.
 */
export function createOpenAiClient(options: OpenAiClientOptions): OpenAI {
  return new OpenAI({
    baseURL: options.baseUrl,
    apiKey: options.apiKey,
    timeout: options.timeoutSec * 1000,
    maxRetries: 0,
    fetch: undiciFetch as unknown as NonNullable<ConstructorParameters<typeof OpenAI>[0]>['fetch'],
    fetchOptions: { dispatcher: llmHttpAgent(options.timeoutSec) } as NonNullable<ConstructorParameters<typeof OpenAI>[0]>['fetchOptions'],
  });
}
