/** Dotted key paths in plain configuration objects: read, set, delete, and a deep merge of two layers. */

export function getPath(obj: unknown, keyPath: string): unknown {
  return keyPath.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}

/**
 * Sets one key; an object on the way that is not there yet starts as its default (`defaults`), so
 * setting one part of a default-valued object (a window's `from`) keeps the others.
 */
export function setPath(obj: Record<string, unknown>, keyPath: string, value: unknown, defaults?: unknown): void {
  const keys = keyPath.split('.');
  let cur = obj;
  keys.slice(0, -1).forEach((k, i) => {
    if (!cur[k] || typeof cur[k] !== 'object') {
      const initial = defaults === undefined ? undefined : getPath(defaults, keys.slice(0, i + 1).join('.'));
      cur[k] = initial && typeof initial === 'object' && !Array.isArray(initial) ? structuredClone(initial) : {};
    }
    cur = cur[k] as Record<string, unknown>;
  });
  cur[keys[keys.length - 1]!] = value;
}

export function deletePath(obj: Record<string, unknown>, keyPath: string): void {
  const keys = keyPath.split('.');
  const parent = getPath(obj, keys.slice(0, -1).join('.'));
  if (parent && typeof parent === 'object') delete (parent as Record<string, unknown>)[keys[keys.length - 1]!];
}

export function deepMerge(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) continue;
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K] };
