/**
 * How deep a request's JSON may nest. Bodies nested thousands deep parse (V8's JSON.parse is not
 * recursive) but break every recursive step after it (`JSON.stringify`, structured clone,
 * translators) with a RangeError, so they are refused at parse with a 400 naming the field.
 * No wire schema Gearbox speaks comes near the limit: a tool's JSON Schema a dozen levels deep
 * sits at about 20.
 */
import type { FieldError } from "./fields.ts";

/** Objects and arrays inside one another, the body's top-level object counting as 1. */
export const MAX_JSON_DEPTH = 64;

/** Segments of the offending path named as the field (`tools[0].function.parameters`). */
const FIELD_SEGMENTS = 4;

interface Frame {
  value: unknown;
  depth: number;
  segment: string;
  parent: Frame | undefined;
}

function pathOf(frame: Frame): string[] {
  const segments: string[] = [];
  for (let f: Frame | undefined = frame; f?.parent; f = f.parent) segments.push(f.segment);
  return segments.reverse();
}

function joinPath(segments: readonly string[]): string {
  return segments.reduce((path, s) => (s.startsWith("[") || path === "" ? path + s : `${path}.${s}`), "");
}

/**
 * Whether `text` holds at most `max` opening brackets (`{`, `[`), counted natively: JSON with no
 * more than that cannot nest past `max`, so its walk can be skipped. Brackets inside strings count
 * too, which only errs towards walking.
 */
export function fewBrackets(text: Buffer, max = MAX_JSON_DEPTH): boolean {
  let n = 0;
  for (let i = text.indexOf(0x7b); i >= 0 && n <= max; i = text.indexOf(0x7b, i + 1)) n++;
  for (let i = text.indexOf(0x5b); i >= 0 && n <= max; i = text.indexOf(0x5b, i + 1)) n++;
  return n <= max;
}

/**
 * The field nesting past `max` in parsed JSON, or undefined. Iterative (a recursive walk would
 * overflow on the very input it looks for). A body within the limit — every one but an attack —
 * is walked once for depths alone; only one past it is walked again for the offending field's
 * path (a frame and a path segment per object cost ~100 ns a message of a long conversation).
 */
export function tooDeep(json: unknown, max = MAX_JSON_DEPTH): FieldError | undefined {
  return deeperThan(json, max) ? offendingField(json, max) : undefined;
}

/** Whether any object or array in `json` sits deeper than `max`: values and their depths on two stacks, nothing else made. */
function deeperThan(json: unknown, max: number): boolean {
  const values: unknown[] = [json];
  const depths: number[] = [1];
  for (let value = values.pop(); value !== undefined; value = values.pop()) {
    const depth = depths.pop() ?? 0;
    if (depth > max) return true;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (typeof item === "object" && item !== null) {
          values.push(item);
          depths.push(depth + 1);
        }
      }
    } else if (typeof value === "object" && value !== null) {
      const object = value as Record<string, unknown>;
      for (const key in object) {
        const item = object[key];
        if (typeof item === "object" && item !== null) {
          values.push(item);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}

/** The first field found deeper than `max`, with its path (undefined: none); stops at the first frame past the limit. */
export function offendingField(json: unknown, max: number): FieldError | undefined {
  const stack: Frame[] = [{ value: json, depth: 1, segment: "", parent: undefined }];
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    const { value, depth } = frame;
    if (depth > max) {
      const field = joinPath(pathOf(frame).slice(0, FIELD_SEGMENTS));
      return { param: field, message: `${field || "The request body"}: nested too deeply (max ${max} levels of objects and arrays).` };
    }
    if (Array.isArray(value)) {
      value.forEach((item, i) => typeof item === "object" && item !== null && stack.push({ value: item, depth: depth + 1, segment: `[${i}]`, parent: frame }));
    } else if (typeof value === "object" && value !== null) {
      const object = value as Record<string, unknown>;
      for (const key in object) {
        const item = object[key];
        if (typeof item === "object" && item !== null) stack.push({ value: item, depth: depth + 1, segment: key, parent: frame });
      }
    }
  }
  return undefined;
}
