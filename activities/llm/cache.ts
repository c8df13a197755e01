/**
 * Content-addressed answer cache: a request is identified by the hash of everything that
 * determines the answer (model, messages, sampling parameters, regeneration attempt), and a
 * hit points at the recorded exchange that answered it. Re-running or replaying unchanged
 * work therefore costs no tokens (DESIGN invariant 6).
 *
 * Entries live at `<dataDir>/llm-cache/<hash[0..2]>/<hash>.json`, written atomically. The
 * endpoint URL is deliberately not part of the key: the same model behind another address
 * (a proxy, a restarted local server on a new port) gives the same answers.
 */
import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../artifacts/store';
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

const CacheEntrySchema = z.object({ exchangeKey: z.string(), cachedAt: z.string() });
export type CacheEntry = z.infer<typeof CacheEntrySchema>;

export class ResponseCache {
  constructor(readonly root: string) {}

  static under(dataDir: string): ResponseCache {
    return new ResponseCache(path.join(dataDir, 'llm-cache'));
  }

  private fileOf(key: string): string {
    return path.join(this.root, key.slice(0, 2), `${key}.json`);
  }

  async get(key: string): Promise<CacheEntry | undefined> {
    let text: string;
    try {
      text = await fsp.readFile(this.fileOf(key), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      const parsed = CacheEntrySchema.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  async put(key: string, exchangeKey: string): Promise<void> {
    const entry: CacheEntry = { exchangeKey, cachedAt: new Date().toISOString() };
    await writeFileAtomic(this.fileOf(key), JSON.stringify(entry));
  }
}
