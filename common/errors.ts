/**
 * Typed gateway errors. Everything that goes wrong on a request becomes a `GatewayError`; it is
 * turned into an OpenAI-shaped body (front door) or an ext_proc `immediate_response` (gRPC server)
 * at the edge of the process, in `toErrorResponse`, and nowhere else.
 */

/** OpenAI's error `type` values, plus Gearbox's own for upstream trouble. */
export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "rate_limit_error"
  | "server_error"
  | "upstream_error"
  | "timeout_error";

export interface GatewayErrorOptions {
  /** The request field at fault, as OpenAI's `param` (e.g. `messages[2].content`). */
  param?: string;
  /** Machine-readable code, as OpenAI's `code` (e.g. `invalid_json`). */
  code?: string;
  /** Extra response headers (e.g. `retry-after`, `allow`). */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, type: ErrorType, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "GatewayError";
    this.status = status;
    this.type = type;
    this.param = options.param ?? null;
    this.code = options.code ?? null;
    this.headers = options.headers ?? {};
  }
}

/** OpenAI's error body: `{"error":{"message","type","param","code"}}`. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * The one place an error becomes a response. Anything that is not a `GatewayError` is an
 * internal fault: its message is not shown to the caller (it may hold internals), only logged.
 */
export function toErrorResponse(err: unknown, requestId?: string, body?: (error: GatewayError) => Buffer): ErrorResponse {
  const gatewayError = asGatewayError(err, requestId);
  const openai = (e: GatewayError): Buffer => {
    const value: OpenAIErrorBody = { error: { message: e.message, type: e.type, param: e.param, code: e.code } };
    return Buffer.from(JSON.stringify(value));
  };
  const bytes = (body ?? openai)(gatewayError);
  const headers: Record<string, string> = {
    ...gatewayError.headers,
    "content-type": "application/json",
    "content-length": String(bytes.length),
  };
  if (requestId) headers["x-gearbox-request-id"] = requestId;
  return { status: gatewayError.status, headers, body: bytes };
}

/** `err` itself when it is a `GatewayError`; anything else is a 500 `internal_error` that shows nothing of it. */
export function asGatewayError(err: unknown, requestId?: string): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError(500, "server_error", "Internal gateway error" + (requestId ? ` (request ${requestId})` : ""), { code: "internal_error", cause: err });
}

/** Shorthand for the most common error: a 400 naming the bad field. */
export function invalidRequest(message: string, param?: string, code?: string): GatewayError {
  const options: GatewayErrorOptions = {};
  if (param !== undefined) options.param = param;
  if (code !== undefined) options.code = code;
  return new GatewayError(400, "invalid_request_error", message, options);
}

/** For `switch` defaults: a value the types say cannot exist. */
export function unreachable(value: never, what: string): never {
  throw new Error(`Unhandled ${what}: ${JSON.stringify(value)}`);
}
