/** Validation returns a result, not an exception: `{ ok: true, value } | { ok: false, errors }`. */
export type Result<T, E = string> = { ok: true; value: T } | { ok: false; errors: E[] };

export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

export function fail<E = string>(...errors: E[]): { ok: false; errors: E[] } {
  return { ok: false, errors };
}
