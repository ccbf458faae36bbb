/**
 * A request body as JSON: present, UTF-8, JSON, nested at most `MAX_JSON_DEPTH` deep. The one rule
 * every process that takes JSON requests applies (the gateway's `request-checks.ts`, the edge
 * agent's server), each refusal the OpenAI-shaped 400 the client gets.
 */
import { invalidRequest, type GatewayError } from "../errors.ts";
import { fail, ok, type Result } from "../result.ts";
import { fewBrackets, tooDeep } from "./json-depth.ts";

const UTF8 = new TextDecoder("utf-8", { fatal: true });

export function decodeJsonBody(body: Buffer): Result<unknown, GatewayError> {
  if (body.length === 0) return fail(invalidRequest("The request body is empty; a JSON object is required.", undefined, "empty_body"));
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    return fail(invalidRequest("The request body is not valid UTF-8.", undefined, "invalid_encoding"));
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return fail(invalidRequest(`The request body is not valid JSON: ${(err as SyntaxError).message}`, undefined, "invalid_json"));
  }
  // Before anything recursive sees it (schemas, JSON.stringify in fingerprints and cache keys).
  const deep = fewBrackets(body) ? undefined : tooDeep(json);
  if (deep) return fail(invalidRequest(deep.message, deep.param || undefined, "json_too_deep"));
  return ok(json);
}
