/**
 * Gemini `functionCall` parts → complete calls. The Gemini API sends each call whole
 * (`{name, args}`). Vertex AI can also stream one call over many parts when asked
 * (`streamFunctionCallArguments`): `{name, willContinue: true}` opens it, parts with
 * `partialArgs: [{jsonPath: "$.a.b[0]", stringValue|numberValue|boolValue|nullValue,
 * willContinue}]` fill in its arguments (a string continues over parts while `willContinue`),
 * and a part without `willContinue` (often `{}`) closes it. Both arrive here, so clients always
 * see a call with its full arguments at once. Anything else is a 502.
 */
import { GatewayError } from "../../../common/errors.ts";
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";

/** A call with all its arguments. `id` and `thoughtSignature` only when Gemini gave them. */
export interface CompletedCall {
  name: string;
  args: JsonObject;
  id?: string;
  thoughtSignature?: string;
}

type PathSegment = string | number;
type Container = JsonObject | unknown[];

interface OpenCall extends CompletedCall {
  /** The JSON path whose string value continues in the next partial argument. */
  continuing?: string;
}

const SEGMENT = /^(?:\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\])/;

function malformed(message: string): GatewayError {
  return new GatewayError(502, "upstream_error", `Gemini sent a malformed function call: ${message}`, { code: "malformed_function_call" });
}

/** Assembles the function calls of one candidate. */
export class FunctionCallAssembler {
  private open: OpenCall | undefined;

  /** Feeds one `functionCall` object; returns the calls it completed (zero, one, or two). */
  push(call: JsonObject): CompletedCall[] {
    const done: CompletedCall[] = [];
    const name = typeof call.name === "string" ? call.name : undefined;
    const partial = Array.isArray(call.partialArgs) ? call.partialArgs : undefined;
    const continues = call.willContinue === true;
    if (name !== undefined) {
      done.push(...this.finish());
      const opened: OpenCall = { name, args: isObject(call.args) ? { ...call.args } : {} };
      if (typeof call.id === "string") opened.id = call.id;
      if (typeof call.thoughtSignature === "string") opened.thoughtSignature = call.thoughtSignature;
      if (!continues && partial === undefined) return [...done, opened];
      this.open = opened;
    }
    if (partial !== undefined) {
      const open = this.open;
      if (open === undefined) throw malformed("partial arguments without an open call");
      for (const arg of partial) applyPartial(open, arg);
    }
    if (!continues && (name === undefined || partial !== undefined)) {
      if (this.open === undefined) throw malformed("a closing part without an open call");
      done.push(...this.finish());
    }
    return done;
  }

  /** Closes the call still open, if any (a candidate that finished without the closing part). */
  finish(): CompletedCall[] {
    const open = this.open;
    this.open = undefined;
    if (open === undefined) return [];
    const call: CompletedCall = { name: open.name, args: open.args };
    if (open.id !== undefined) call.id = open.id;
    if (open.thoughtSignature !== undefined) call.thoughtSignature = open.thoughtSignature;
    return [call];
  }

  /** True while a streamed call is incomplete. */
  get pending(): boolean {
    return this.open !== undefined;
  }
}

function applyPartial(call: OpenCall, arg: unknown): void {
  if (!isObject(arg) || typeof arg.jsonPath !== "string") throw malformed("a partial argument without a jsonPath");
  const path = parsePath(arg.jsonPath);
  let value: unknown;
  if (typeof arg.stringValue === "string") {
    const previous = call.continuing === arg.jsonPath ? get(call.args, path) : undefined;
    value = typeof previous === "string" ? previous + arg.stringValue : arg.stringValue;
  } else if (typeof arg.numberValue === "number") value = arg.numberValue;
  else if (typeof arg.boolValue === "boolean") value = arg.boolValue;
  else if ("nullValue" in arg) value = null;
  else throw malformed(`no value for ${arg.jsonPath}`);
  set(call.args, path, value);
  call.continuing = typeof arg.stringValue === "string" && arg.willContinue === true ? arg.jsonPath : undefined;
}

/** `$.a.b[0]['c d']` → `["a", "b", 0, "c d"]` (the RFC 9535 subset Gemini uses). */
export function parsePath(jsonPath: string): PathSegment[] {
  if (!jsonPath.startsWith("$")) throw malformed(`bad jsonPath ${JSON.stringify(jsonPath)}`);
  const segments: PathSegment[] = [];
  let rest = jsonPath.slice(1);
  while (rest.length > 0) {
    const m = SEGMENT.exec(rest);
    if (!m) throw malformed(`bad jsonPath ${JSON.stringify(jsonPath)}`);
    const [whole, dotted, index, single, double] = m;
    if (index !== undefined) segments.push(Number(index));
    else segments.push((dotted ?? single ?? double ?? "").replace(/\\(.)/g, "$1"));
    rest = rest.slice(whole.length);
  }
  if (segments.length === 0) throw malformed("a partial argument for the whole argument object");
  return segments;
}

function child(container: Container, key: PathSegment): unknown {
  return Array.isArray(container) ? (typeof key === "number" ? container[key] : undefined) : typeof key === "string" ? container[key] : undefined;
}

function get(root: JsonObject, path: PathSegment[]): unknown {
  let node: unknown = root;
  for (const key of path) {
    if (!isObject(node) && !Array.isArray(node)) return undefined;
    node = child(node, key);
  }
  return node;
}

function set(root: JsonObject, path: PathSegment[], value: unknown): void {
  let node: Container = root;
  path.forEach((key, i) => {
    const next = path[i + 1];
    if (next === undefined) return assign(node, key, value);
    const existing = child(node, key);
    const container: Container = isObject(existing) || Array.isArray(existing) ? existing : typeof next === "number" ? [] : {};
    if (container !== existing) assign(node, key, container);
    node = container;
  });
}

function assign(container: Container, key: PathSegment, value: unknown): void {
  if (Array.isArray(container) !== (typeof key === "number")) throw malformed("a jsonPath that mixes array and object access");
  if (Array.isArray(container)) {
    while (container.length < (key as number)) container.push(null);
    container[key as number] = value;
  } else container[key as string] = value;
}
