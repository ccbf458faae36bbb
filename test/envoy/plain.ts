/**
 * Typed access to plain JSON-like values (YAML-parsed configs, `toObject` output) without `any`.
 */

/** A JSON object. */
export type PlainObject = Record<string, unknown>;

/** True for a non-null, non-array object. */
export function isPlainObject(value: unknown): value is PlainObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);
}

/** Short description of a JSON value's kind and content, for error messages. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
    return `${typeof value} ${String(value)}`;
  }
  return typeof value === "object" ? "an object" : typeof value;
}

/** The object at `value[key]`, or undefined when absent or not an object. */
export function objectAt(value: unknown, key: string): PlainObject | undefined {
  if (!isPlainObject(value)) return undefined;
  const child = value[key];
  return isPlainObject(child) ? child : undefined;
}

/** The array at `value[key]`, or an empty array when absent or not an array. */
export function arrayAt(value: unknown, key: string): readonly unknown[] {
  if (!isPlainObject(value)) return [];
  const child = value[key];
  return Array.isArray(child) ? (child as unknown[]) : [];
}

/** The string at `value[key]`, or undefined. */
export function stringAt(value: unknown, key: string): string | undefined {
  if (!isPlainObject(value)) return undefined;
  const child = value[key];
  return typeof child === "string" ? child : undefined;
}

/**
 * Follows a dotted path with `[i]` indexes (`static_resources.clusters[0].name`) and returns
 * what is there, or undefined when any step is missing.
 */
export function valueAtPath(value: unknown, dotted: string): unknown {
  let current: unknown = value;
  for (const step of dotted.match(/[^.[\]]+|\[\d+\]/g) ?? []) {
    if (step.startsWith("[")) {
      if (!Array.isArray(current)) return undefined;
      current = (current as unknown[])[Number(step.slice(1, -1))];
    } else {
      if (!isPlainObject(current)) return undefined;
      current = current[step];
    }
  }
  return current;
}

/** Like {@link valueAtPath} but throws unless the value there is an object (for test setup). */
export function objectAtPath(value: unknown, dotted: string): PlainObject {
  const found = valueAtPath(value, dotted);
  if (!isPlainObject(found)) throw new Error(`no object at ${dotted}`);
  return found;
}

/** Proto3's default JSON name for a field: `max_message_timeout` → `maxMessageTimeout`. */
export function lowerCamel(snake: string): string {
  return snake.replace(/_+([a-zA-Z0-9])/g, (_m: string, c: string) => c.toUpperCase());
}

/** Inverse of {@link lowerCamel} for FieldMask paths: `maxMessageTimeout` → `max_message_timeout`. */
export function snakeCase(camel: string): string {
  return camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Like {@link valueAtPath} but throws unless the value there is an array (for test setup). */
export function arrayAtPath(value: unknown, dotted: string): unknown[] {
  const found = valueAtPath(value, dotted);
  if (!Array.isArray(found)) throw new Error(`no array at ${dotted}`);
  return found as unknown[];
}
