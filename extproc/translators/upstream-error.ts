/** Upstream error bodies → OpenAI-shaped errors, status kept (shared by all translators). */
import { GatewayError, type ErrorType } from "../../common/errors.ts";
import { isObject } from "../../common/schemas/fields.ts";
import { readUpstreamJson } from "./upstream-json.ts";

const TYPE_BY_STATUS: Record<number, ErrorType> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  408: "timeout_error",
  413: "invalid_request_error",
  422: "invalid_request_error",
  429: "rate_limit_error",
};

export function errorTypeForStatus(status: number): ErrorType {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? "upstream_error" : "invalid_request_error");
}

/**
 * Reads whatever error body a provider sent (OpenAI's `{error:{…}}`, a bare `{message}`,
 * `{error:"text"}`, plain text) into a `GatewayError` with the upstream's status.
 */
export function upstreamError(status: number, headers: Record<string, string>, body: Buffer): GatewayError {
  let message = `Upstream returned HTTP ${status}`;
  let code: string | undefined;
  let param: string | undefined;
  const json = readUpstreamJson(body);
  if (json === undefined) {
    const text = body.toString("utf8").trim();
    if (text) message = text.slice(0, 500);
  }
  const inner = isObject(json) && isObject(json.error) ? json.error : isObject(json) ? json : undefined;
  if (inner) {
    if (typeof inner.message === "string") message = inner.message;
    else if (isObject(json) && typeof json.error === "string") message = json.error;
    if (typeof inner.code === "string") code = inner.code;
    else if (typeof inner.code === "number") code = String(inner.code);
    if (typeof inner.param === "string") param = inner.param;
  }
  const keep: Record<string, string> = {};
  if (headers["retry-after"]) keep["retry-after"] = headers["retry-after"];
  return new GatewayError(status, errorTypeForStatus(status), message, {
    headers: keep,
    ...(code !== undefined && { code }),
    ...(param !== undefined && { param }),
  });
}
