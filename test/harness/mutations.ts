/**
 * Header and body mutations as Envoy's ext_proc filter applies them.
 *
 * Copies `source/extensions/filters/common/mutation_rules/mutation_rules.cc` (Checker::check,
 * isAllowed, isValidValue) and `source/extensions/filters/http/ext_proc/mutation_utils.cc`
 * (applyHeaderMutations, applyBodyMutations) of envoyproxy/envoy.
 */
import type { BodyMutation__Output } from "../../proto/generated/envoy/service/ext_proc/v3/BodyMutation.ts";
import type { HeaderMutation__Output } from "../../proto/generated/envoy/service/ext_proc/v3/HeaderMutation.ts";
import type { HeaderValueOption__Output } from "../../proto/generated/envoy/config/core/v3/HeaderValueOption.ts";
import type { HeaderMutationRules } from "./config.ts";
import type { HeaderMap } from "./headers.ts";
import type { Direction, IgnoredMutation, IgnoreReason } from "./stats.ts";

/** The operation a mutation performs (Envoy `CheckOperation`). */
export type CheckOperation = "set" | "append" | "remove";

/** Result of checking one mutation against the rules (Envoy `CheckResult` with a reason). */
export type CheckResult = { result: "ok" } | { result: "ignore" | "fail"; reason: IgnoreReason };

/** Envoy's "extra routing headers" (mutation_rules.cc): `host`, `:authority`, `:method`, `:scheme`. */
const ROUTING_HEADERS = new Set(["host", ":authority", ":method", ":scheme"]);
/** Envoy's header prefix (Bootstrap `header_prefix` default). */
const ENVOY_PREFIX = "x-envoy";

const TOKEN = /^:?[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// eslint-disable-next-line no-control-regex
const INVALID_VALUE_CHAR = /[\x00-\x08\x0a-\x1f\x7f]/;
const AUTHORITY = /^[A-Za-z0-9\-._~!$&'()*+,;=:@[\]%]+$/;

/** Envoy `HeaderUtility::headerNameIsValid` (token characters, optional leading `:`). */
export function headerNameIsValid(name: string): boolean {
  return TOKEN.test(name);
}

/** Envoy `HeaderUtility::headerValueIsValid`: no NUL, CR, LF or other control characters. */
export function headerValueIsValid(value: string): boolean {
  return !INVALID_VALUE_CHAR.test(value);
}

function fullMatch(source: string | undefined): RegExp | undefined {
  return source === undefined ? undefined : new RegExp(`^(?:${source})$`);
}

/** Envoy `Filters::Common::MutationRules::Checker`. */
export class MutationChecker {
  private readonly allow: RegExp | undefined;
  private readonly disallow: RegExp | undefined;

  constructor(private readonly rules: HeaderMutationRules) {
    this.allow = fullMatch(rules.allow_expression);
    this.disallow = fullMatch(rules.disallow_expression);
  }

  /** Checks one mutation of `name` (lower-case) to `value`. */
  check(op: CheckOperation, name: string, value: string): CheckResult {
    const denied = this.deniedBy(op, name) ?? (op === "remove" ? undefined : invalidValue(name, value));
    if (denied === undefined) return { result: "ok" };
    return { result: this.rules.disallow_is_error === true ? "fail" : "ignore", reason: denied };
  }

  /** Envoy `Checker::isAllowed`, returning the rule that denies instead of a boolean. */
  private deniedBy(op: CheckOperation, name: string): IgnoreReason | undefined {
    // "No matter what, you can't remove the host or any : headers."
    if (op === "remove" && (name.startsWith(":") || name === "host")) return "not-removable";
    if (this.disallow?.test(name) === true) return "disallow-expression";
    if (this.allow?.test(name) === true) return undefined;
    if (this.rules.disallow_all === true) return "disallow-all";
    if (this.rules.allow_all_routing !== true && ROUTING_HEADERS.has(name)) return "routing-header";
    // System headers take one value, so appends are refused, as are all changes with disallow_system.
    if (name.startsWith(":") && (op === "append" || this.rules.disallow_system === true)) return "system-header";
    if (this.rules.allow_envoy !== true && name.startsWith(ENVOY_PREFIX)) return "envoy-header";
    return undefined;
  }
}

/** Envoy `Checker::isValidValue`. */
function invalidValue(name: string, value: string): IgnoreReason | undefined {
  if (!name.startsWith(":") && !headerValueIsValid(value)) return "invalid-value";
  if ((name === "host" || name === ":authority") && !AUTHORITY.test(value)) return "invalid-value";
  if (name === ":scheme" && value !== "http" && value !== "https") return "invalid-value";
  if (name === ":status" && !(/^\d+$/.test(value) && Number(value) >= 200)) return "invalid-value";
  return undefined;
}

/** Result of applying a `HeaderMutation`: an error stands for Envoy's InvalidArgument → local reply. */
export type MutationOutcome =
  { ok: true; ignored: IgnoredMutation[]; valueFieldUsed: number } | { ok: false; error: string; ignored: IgnoredMutation[]; valueFieldUsed: number };

/** Options of `applyHeaderMutation`. */
export interface ApplyOptions {
  direction: Direction;
  /** CONTINUE_AND_REPLACE: `:method` may be changed regardless of the rules. */
  replacingMessage: boolean;
  /** Envoy removes content-length for this body mode: `content-length` sets are skipped. */
  removeContentLength: boolean;
}

/** Reads a header value: `raw_value` (Envoy's `send_header_raw_value`), else `value`. */
function headerValue(option: HeaderValueOption__Output): { value: string; usedValueField: boolean } | "both" {
  const raw = option.header?.raw_value;
  const plain = option.header?.value ?? "";
  if (raw !== undefined && raw.length > 0) return plain.length > 0 ? "both" : { value: raw.toString("latin1"), usedValueField: false };
  return { value: plain, usedValueField: plain.length > 0 };
}

/** How one `set_headers` entry applies (`append` BoolValue, or a non-default `append_action`). */
function appendMode(option: HeaderValueOption__Output, exists: boolean): "append" | "overwrite" | "skip" {
  switch (option.append_action) {
    case undefined:
    case "APPEND_IF_EXISTS_OR_ADD":
      // Envoy's ext_proc reads the deprecated `append` (default false) unless an action is set.
      return option.append?.value === true ? "append" : "overwrite";
    case "ADD_IF_ABSENT":
      return exists ? "skip" : "append";
    case "OVERWRITE_IF_EXISTS_OR_ADD":
      return "overwrite";
    case "OVERWRITE_IF_EXISTS":
      return exists ? "overwrite" : "skip";
    default: {
      const unknown: never = option.append_action;
      throw new Error(`unknown append_action ${String(unknown)}`);
    }
  }
}

/**
 * Envoy `MutationUtils::applyHeaderMutations`: removals first, then sets, each checked against the
 * rules; disallowed ones are ignored (or fail with `disallow_is_error`), invalid names or values fail.
 */
export function applyHeaderMutation(headers: HeaderMap, mutation: HeaderMutation__Output, checker: MutationChecker, options: ApplyOptions): MutationOutcome {
  const ignored: IgnoredMutation[] = [];
  let valueFieldUsed = 0;
  const refuse = (header: string, operation: CheckOperation, reason: IgnoreReason): void => {
    ignored.push({ direction: options.direction, header, operation, reason });
  };
  const fail = (error: string): MutationOutcome => ({ ok: false, error, ignored, valueFieldUsed });

  for (const name of mutation.remove_headers ?? []) {
    if (!headerNameIsValid(name)) return fail("Invalid character in remove_headers mutation.");
    const key = name.toLowerCase();
    const check = checker.check("remove", key, "");
    if (check.result === "ok") {
      headers.remove(key);
      continue;
    }
    refuse(key, "remove", check.reason);
    if (check.result === "fail") return fail(`Invalid attempt to remove ${key}`);
  }

  for (const option of mutation.set_headers ?? []) {
    if (option.header === undefined) continue;
    const key = (option.header.key ?? "").toLowerCase();
    // "Always skip setting content length header when remove_content_length is true."
    if (options.removeContentLength && key === "content-length") {
      refuse(key, "set", "content-length-removed");
      continue;
    }
    const read = headerValue(option);
    if (read === "both") return fail("Only one of value or raw_value in the HeaderValue message should be set.");
    if (read.usedValueField) valueFieldUsed += 1;
    if (!headerNameIsValid(key) || !headerValueIsValid(read.value)) {
      return fail("Invalid character in set_headers mutation.");
    }
    const exists = headers.has(key);
    const mode = appendMode(option, exists);
    if (mode === "skip") continue;
    const op: CheckOperation = mode === "append" && exists ? "append" : "set";
    let check = checker.check(op, key, read.value);
    // "Special handling to allow changing :method when the CONTINUE_AND_REPLACE option is selected."
    if (options.replacingMessage && key === ":method") check = { result: "ok" };
    if (check.result === "ok") {
      if (mode === "append") headers.add(key, read.value);
      else headers.set(key, read.value);
      continue;
    }
    refuse(key, op, check.reason);
    if (check.result === "fail") return fail(`Invalid attempt to modify ${key}`);
  }
  return { ok: true, ignored, valueFieldUsed };
}

/** Envoy `MutationUtils::applyBodyMutations`: replace or clear the data, else leave it. */
export function applyBodyMutation(data: Buffer, mutation: BodyMutation__Output): Buffer {
  switch (mutation.mutation) {
    case "body":
      return mutation.body ?? Buffer.alloc(0);
    case "clear_body":
      return mutation.clear_body === true ? Buffer.alloc(0) : data;
    case undefined:
      return data;
    default: {
      const unknown: never = mutation.mutation;
      throw new Error(`unknown body mutation ${String(unknown)}`);
    }
  }
}

/** `body_mutation().body().size()`, the length Envoy compares with content-length. */
export function mutationBodyLength(mutation: BodyMutation__Output): number {
  return mutation.body?.length ?? 0;
}
