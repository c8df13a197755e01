/**
 * What `start.ts` checks before it starts anything (Temporal, workers, a run): that its local
 * sources are folders, and that the LLM endpoint answers, accepts the key and serves the models the
 * run would ask for (one cheap call: the endpoint's model list). Each problem is a `ConfigError`
 * (exit 2) saying what to change.
 */
import * as fs from 'node:fs';
import OpenAI from 'openai';
import type { RepoSource } from '../../activities/contracts';
import { createOpenAiClient } from '../../activities/llm/http-agent';
import { ConfigError, type Config } from '../../temporal.config';

/** Local sources that are not folders, refused with the path as given. */
export function checkLocalSources(sources: readonly RepoSource[]): void {
  const bad = sources
    .filter((s): s is Extract<RepoSource, { kind: 'local' }> => s.kind === 'local')
    .map((s) => ({ path: s.path, stat: fs.statSync(s.path, { throwIfNoEntry: false }) }))
    .filter((s) => !s.stat?.isDirectory())
    .map((s) => `${s.path} (${s.stat ? 'not a folder' : 'no such folder'})`);
  if (bad.length) throw new ConfigError(`local source${bad.length > 1 ? 's' : ''} not found: ${bad.join(', ')}; nothing was started`);
}

/** The models a crawl's LLM steps would ask for under this configuration. */
export function crawlModels(config: Config): string[] {
  const named = [config.llm.model, ...Object.values(config.llm.models), config.loops.solvability.model];
  return [...new Set(named.filter((m): m is string => typeof m === 'string' && m.length > 0))];
}

const LISTED = 30;

/**
 * Asks the endpoint for its models; refuses an endpoint that does not answer, refuses the key, or
 * does not serve one of `models` (naming the ones it serves). An endpoint without a model list
 * (404) is let through with a note.
 */
export async function checkEndpoint(llm: Pick<Config['llm'], 'baseUrl' | 'apiKey'>, models: readonly string[], opts: { timeoutSec?: number; note?: (line: string) => void } = {}): Promise<{ served: string[] | null }> {
  const client = createOpenAiClient({ baseUrl: llm.baseUrl, apiKey: llm.apiKey, timeoutSec: opts.timeoutSec ?? 15 });
  const served: string[] = [];
  try {
    for await (const model of client.models.list()) {
      served.push(model.id);
      if (served.length >= 10_000) break;
    }
  } catch (err) {
    if (err instanceof OpenAI.APIConnectionError) {
      const cause = (err.cause as Error | undefined)?.message ?? err.message;
      throw new ConfigError(`no LLM endpoint answers at ${llm.baseUrl} (${cause}): start the server, or point OPENAI_BASE_URL (llm.baseUrl) at one; nothing was started`);
    }
    if (err instanceof OpenAI.AuthenticationError || err instanceof OpenAI.PermissionDeniedError) {
      throw new ConfigError(`the LLM endpoint at ${llm.baseUrl} refused the API key (HTTP ${err.status}): set OPENAI_API_KEY (llm.apiKey); nothing was started`);
    }
    if (err instanceof OpenAI.NotFoundError) {
      opts.note?.(`the LLM endpoint at ${llm.baseUrl} lists no models (HTTP 404 for /models); the model names were not checked`);
      return { served: null };
    }
    if (err instanceof OpenAI.APIError) {
      throw new ConfigError(`the LLM endpoint at ${llm.baseUrl} answered HTTP ${err.status ?? '?'} when asked for its models (${err.message}); nothing was started`);
    }
    throw err;
  }
  const missing = models.filter((m) => !served.includes(m));
  if (missing.length) {
    const list = served.length ? `it serves: ${served.slice(0, LISTED).join(', ')}${served.length > LISTED ? `, ... (${served.length} in all)` : ''}` : 'it lists no model';
    throw new ConfigError(
      `model${missing.length > 1 ? 's' : ''} ${missing.join(', ')} not served by the LLM endpoint at ${llm.baseUrl}; ${list}. ` +
        'Set OPENAI_MODEL (llm.model), or llm.models.<step>, to a served name; nothing was started',
    );
  }
  return { served };
}
