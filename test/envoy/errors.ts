/**
 * Error paths for the proto JSON checker: `a.b[0]["map key"].c`, the shape Envoy users search
 * their YAML for.
 */

/** Collected `path: message` strings, in the order the walk found them. */
export type ErrorList = string[];

/** Appends `path: message` (`(root)` for the top-level object). */
export function report(errors: ErrorList, path: string, message: string): void {
  errors.push(`${path === "" ? "(root)" : path}: ${message}`);
}

/** `parent.key` (or just `key` at the root). */
export function fieldPath(parent: string, key: string): string {
  return parent === "" ? key : `${parent}.${key}`;
}

/** `parent[index]`. */
export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

/** `parent["key"]`: map keys are quoted because Envoy's contain dots (extension names). */
export function keyPath(parent: string, key: string): string {
  return `${parent}[${JSON.stringify(key)}]`;
}
