/**
 * Field readers for validating wire JSON. Each reader records a problem under the field's path
 * (`messages[2].content`) instead of throwing, so one pass reports the first bad field by name.
 */

export interface FieldError {
  param: string;
  message: string;
}

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/** Collects field errors while walking one JSON document. */
export class FieldReader {
  readonly errors: FieldError[] = [];

  fail(param: string, message: string): undefined {
    this.errors.push({ param, message });
    return undefined;
  }

  string(obj: JsonObject, key: string, path: string, required = false): string | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return required ? this.fail(path, `'${path}' is required.`) : undefined;
    if (typeof value !== "string") return this.fail(path, `'${path}' must be a string, got ${describe(value)}.`);
    return value;
  }

  number(obj: JsonObject, key: string, path: string, range?: { min?: number; max?: number; integer?: boolean }): number | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "number") return this.fail(path, `'${path}' must be a number, got ${describe(value)}.`);
    // JSON.parse reads 1e999 as Infinity: a number, but not one any model takes.
    if (!Number.isFinite(value)) return this.fail(path, `'${path}' must be a finite number, got ${value}.`);
    if (range?.integer && !Number.isInteger(value)) return this.fail(path, `'${path}' must be an integer.`);
    if (range?.min !== undefined && value < range.min) return this.fail(path, `'${path}' must be >= ${range.min}, got ${value}.`);
    if (range?.max !== undefined && value > range.max) return this.fail(path, `'${path}' must be <= ${range.max}, got ${value}.`);
    return value;
  }

  boolean(obj: JsonObject, key: string, path: string): boolean | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "boolean") return this.fail(path, `'${path}' must be a boolean, got ${describe(value)}.`);
    return value;
  }

  object(obj: JsonObject, key: string, path: string): JsonObject | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return undefined;
    if (!isObject(value)) return this.fail(path, `'${path}' must be an object, got ${describe(value)}.`);
    return value;
  }

  array(obj: JsonObject, key: string, path: string, required = false): unknown[] | undefined {
    const value = obj[key];
    if (value === undefined || value === null) return required ? this.fail(path, `'${path}' is required.`) : undefined;
    if (!Array.isArray(value)) return this.fail(path, `'${path}' must be an array, got ${describe(value)}.`);
    return value as unknown[];
  }

  /** A map of string → string (OpenAI `metadata`). */
  stringMap(obj: JsonObject, key: string, path: string): Record<string, string> | undefined {
    const value = this.object(obj, key, path);
    if (!value) return undefined;
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== "string") return this.fail(`${path}.${k}`, `'${path}.${k}' must be a string.`);
    }
    return value as Record<string, string>;
  }

  /** One of a fixed set of strings. */
  oneOf<T extends string>(obj: JsonObject, key: string, path: string, allowed: readonly T[]): T | undefined {
    const value = this.string(obj, key, path);
    if (value === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(value)) {
      return this.fail(path, `'${path}' must be one of ${allowed.map((a) => `'${a}'`).join(", ")}, got '${value}'.`);
    }
    return value as T;
  }
}

/** Copies the keys of `obj` not in `known` (unknown fields kept for pass-through). */
export function extraFields(obj: JsonObject, known: ReadonlySet<string>): JsonObject {
  const extra: JsonObject = {};
  for (const key of Object.keys(obj)) if (!known.has(key)) extra[key] = obj[key];
  return extra;
}
