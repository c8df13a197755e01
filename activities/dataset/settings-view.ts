/**
 * A run's frozen settings as people read them: one `key = value` row per setting, nested
 * settings under dotted keys (`mutation.enabled = false`), instead of raw JSON. Used by the
 * report and the dataset card.
 */

/** The rows of `settings`, in their order; a list or a scalar is one value (a list as JSON). */
export function settingRows(settings: Record<string, unknown>, prefix = ''): [key: string, value: string][] {
  return Object.entries(settings).flatMap(([k, v]): [string, string][] => {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0) return settingRows(v as Record<string, unknown>, key);
    return [[key, typeof v === 'string' ? v : JSON.stringify(v) ?? 'undefined']];
  });
}
