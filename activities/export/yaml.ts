/**
 * A small YAML writer for dataset-card front matter: block mappings and sequences, with every
 * scalar written as a JSON value (YAML 1.2 reads JSON scalars as they are, so any string is
 * safely quoted and no value changes type on the way).
 */
export type YamlValue = string | number | boolean | null | YamlValue[] | { [key: string]: YamlValue };

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

function key(k: string): string {
  return PLAIN_KEY.test(k) ? k : JSON.stringify(k);
}

function scalar(v: string | number | boolean | null): string {
  if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(`cannot write ${v} to YAML`);
  return JSON.stringify(v);
}

function isBlock(v: YamlValue): v is YamlValue[] | { [key: string]: YamlValue } {
  return v !== null && typeof v === 'object' && (Array.isArray(v) ? v.length > 0 : Object.keys(v).length > 0);
}

function lines(value: YamlValue, indent: string): string[] {
  if (Array.isArray(value)) {
    return value.flatMap((item) => {
      if (!isBlock(item)) return [`${indent}- ${Array.isArray(item) ? '[]' : item !== null && typeof item === 'object' ? '{}' : scalar(item as string)}`];
      const inner = lines(item, `${indent}  `);
      // The first line of the item goes on the dash.
      return [`${indent}- ${inner[0]!.slice(indent.length + 2)}`, ...inner.slice(1)];
    });
  }
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => {
      if (!isBlock(v)) return [`${indent}${key(k)}: ${Array.isArray(v) ? '[]' : v !== null && typeof v === 'object' ? '{}' : scalar(v as string)}`];
      return [`${indent}${key(k)}:`, ...lines(v, `${indent}  `)];
    });
  }
  return [`${indent}${scalar(value)}`];
}

export function toYaml(value: { [key: string]: YamlValue }): string {
  return lines(value, '').join('\n') + '\n';
}
