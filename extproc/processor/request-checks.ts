/**
 * What can be refused before the body is read or understood: the method, the content type and
 * size, and the body itself (UTF-8 JSON, nested at most `MAX_JSON_DEPTH` deep, that the
 * endpoint's schema accepts). Each refusal is the OpenAI-shaped error the client gets.
 */
import type { EndpointSpec, ParsedCall } from "../endpoints/spec.ts";
import { GatewayError, invalidRequest } from "../../common/errors.ts";
import { fail, ok, type Result } from "../../common/result.ts";
import { decodeJsonBody } from "../../common/schemas/json-body.ts";
import type { Headers } from "./outcome.ts";

/** The request head's problem, if any: method, content type, declared size, an empty body. */
export function checkHead(spec: EndpointSpec, headers: Headers, endOfStream: boolean, maxBytes: number): GatewayError | undefined {
  const method = headers[":method"] ?? "GET";
  if (method !== spec.method) {
    return new GatewayError(405, "invalid_request_error", `Method ${method} is not allowed on ${spec.path}; use ${spec.method}.`, {
      code: "method_not_allowed",
      headers: { allow: spec.method },
    });
  }
  const given = headers["content-type"];
  // Most clients send exactly this: no split, trim or case fold to see it.
  const contentType = given === "application/json" ? given : (given ?? "").split(";")[0]?.trim().toLowerCase();
  if (contentType !== "application/json") {
    return new GatewayError(415, "invalid_request_error", `Content-Type must be application/json, got '${headers["content-type"] ?? "(none)"}'.`, {
      code: "unsupported_media_type",
    });
  }
  const declared = Number(headers["content-length"]);
  if (declared > maxBytes) return tooLarge(declared, maxBytes);
  if (endOfStream) return emptyBody();
  return undefined;
}

/** The body as the endpoint's call: UTF-8, JSON, within the size limit, valid for its schema. */
export function parseBody(spec: EndpointSpec, body: Buffer, maxBytes: number): Result<{ parsed: ParsedCall; json: unknown }, GatewayError> {
  if (body.length > maxBytes) return fail(tooLarge(body.length, maxBytes));
  const decoded = decodeJsonBody(body);
  if (!decoded.ok) return decoded;
  const json = decoded.value;
  const parsed = spec.parse(json);
  if (!parsed.ok) {
    const first = parsed.errors[0] ?? { param: "", message: "Invalid request." };
    return fail(invalidRequest(first.message, first.param || undefined, "invalid_request"));
  }
  return ok({ parsed: parsed.value, json });
}

function tooLarge(size: number, max: number): GatewayError {
  return new GatewayError(413, "invalid_request_error", `The request body is ${size} bytes; the limit is ${max} bytes.`, { code: "request_too_large" });
}

function emptyBody(): GatewayError {
  return invalidRequest("The request body is empty; a JSON object is required.", undefined, "empty_body");
}
