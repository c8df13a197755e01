/**
 * Content-addressed answer cache: a request is identified by the hash of everything that
 * determines the answer (model, messages, sampling parameters, regeneration attempt), and a
 * hit points at the recorded exchange that answered it. Re-running or replaying unchanged
 * work therefore costs no tokens (docs/architecture.md, invariant 6).
 *
 * Entries live in the store (`cacheGet`/`cachePut`). The endpoint URL is deliberately not part
 * of the key: the same model behind another address (a proxy, a restarted local server on a new
 * port) gives the same answers.
 */
import { createHash } from 'node:crypto';
import type { ChatMessage } from './types';

export interface CacheKeyInput {
  model: string;
  messages: ChatMessage[];
  temperature: number;
  maxTokens: number;
  attempt: number;
}

const CACHE_KEY_VERSION = 1;

export function cacheKeyOf(input: CacheKeyInput): string {
  const canonical = JSON.stringify({
    v: CACHE_KEY_VERSION,
    model: input.model,
    messages: input.messages.map((m) => ({ role: m.role, content: m.content })),
    temperature: input.temperature,
    maxTokens: input.maxTokens,
    attempt: input.attempt,
  });
  return createHash('sha256').update(canonical).digest('hex');
}
