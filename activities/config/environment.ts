/**
 * The environment mapping: every key of the schema has a variable derived from its path, read from
 * the schema itself (so a new key cannot lack one): `sandbox.memoryMb` -> `REPOST_SANDBOX_MEMORY_MB`.
 * The usual names of the ecosystem are honoured too (`ENV_ALIASES`). An environment string is read
 * as its key's type (`coerce`); zod then validates it.
 */
import { z } from 'zod';
import { ConfigSchema } from './schema';

/** Well-known variable names of the ecosystem, mapped onto config paths. */
export const ENV_ALIASES: Readonly<Record<string, string>> = {
  TEMPORAL_ADDRESS: 'temporal.address',
  TEMPORAL_NAMESPACE: 'temporal.namespace',
  OPENAI_BASE_URL: 'llm.baseUrl',
  OPENAI_API_KEY: 'llm.apiKey',
  OPENAI_MODEL: 'llm.model',
  GITHUB_TOKEN: 'github.token',
};

/** A key's own variable: `sandbox.memoryMb` -> `REPOST_SANDBOX_MEMORY_MB`. */
export function envNameFor(keyPath: string): string {
  return 'REPOST_' + keyPath.replace(/\./g, '_').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

export type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/** One configuration key as the schema declares it. */
export interface ConfigKey {
  /** Dotted path, e.g. `sandbox.memoryMb`; a record (`llm.prices`) or a date window's part is one key. */
  path: string;
  /** Its environment variable (`REPOST_SANDBOX_MEMORY_MB`). */
  env: string;
  /** The JSON type the environment string is read as. */
  type: 'string' | 'number' | 'boolean' | 'array' | 'object';
  /** Whether it belongs to the process (never frozen into a run). */
  perProcess: boolean;
  /** The values it may take, when the schema lists them (`loops.sanity.testCalls`: literal, reachable). */
  values?: string[];
}

interface JsonSchemaNode {
  type?: string | string[];
  properties?: Record<string, JsonSchemaNode>;
  anyOf?: JsonSchemaNode[];
  enum?: unknown[];
  perProcess?: boolean;
}

let keysCache: { keys: ConfigKey[]; processSections: string[] } | null = null;

/** The schema's keys, read from the schema itself (through its JSON Schema form). */
function schemaKeys(): { keys: ConfigKey[]; processSections: string[] } {
  if (keysCache) return keysCache;
  const root = z.toJSONSchema(ConfigSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchemaNode;
  const keys: ConfigKey[] = [];
  const processSections: string[] = [];
  const walk = (node: JsonSchemaNode, prefix: string, inProcess: boolean): void => {
    const own = node.perProcess === true;
    if (own && !inProcess && prefix) processSections.push(prefix);
    const perProcess = inProcess || own;
    if (node.properties && prefix !== '') {
      for (const [k, child] of Object.entries(node.properties)) walk(child, `${prefix}.${k}`, perProcess);
      return;
    }
    if (node.properties) {
      for (const [k, child] of Object.entries(node.properties)) walk(child, k, perProcess);
      return;
    }
    const types = [node.type ?? node.anyOf?.map((a) => a.type)].flat().filter((t): t is string => typeof t === 'string');
    const type = types.includes('boolean') ? 'boolean' : types.includes('number') || types.includes('integer') ? 'number' : types.includes('array') ? 'array' : types.includes('object') ? 'object' : 'string';
    const values = node.enum?.filter((v): v is string => typeof v === 'string');
    keys.push({ path: prefix, env: envNameFor(prefix), type, perProcess, ...(values?.length ? { values } : {}) });
  };
  walk(root, '', false);
  keysCache = { keys, processSections };
  return keysCache;
}

/** Every key of the configuration, with its environment variable; derived from the schema. */
export function configKeys(): readonly ConfigKey[] {
  return schemaKeys().keys;
}

/** The sections and keys that belong to a process, never to a run (the schema's `perProcess` marks). */
export function processOnlyPaths(): readonly string[] {
  return schemaKeys().processSections;
}

/** Turns an environment string into the key's type; zod then validates it. */
export function coerce(raw: string, type: ConfigKey['type']): Json {
  if (type === 'number') return raw.trim() === '' ? raw : Number(raw);
  if (type === 'boolean') {
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    return raw;
  }
  if (type === 'array') return raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (type === 'object') {
    try {
      return JSON.parse(raw) as Json;
    } catch {
      return raw;
    }
  }
  return raw;
}
