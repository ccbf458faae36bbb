/**
 * The errors authentication answers with, shared by model calls and the admin API. OpenAI-shaped
 * (`invalid_api_key` is OpenAI's own code); none of them echoes the key or names a tenant's ranges.
 */
import { GatewayError } from "../../common/errors.ts";

export function missingApiKey(kind: "call" | "admin"): GatewayError {
  const where = kind === "call" ? " (or where your SDK sends its API key: 'x-api-key', 'x-goog-api-key')" : "";
  return new GatewayError(
    401,
    "invalid_request_error",
    `You didn't provide an API key. Send your Gearbox ${kind} key as 'Authorization: Bearer <key>'${where}.`,
    {
      code: "missing_api_key",
    },
  );
}

/** Unknown, revoked, or its tenant is gone: the same answer, so it tells a guesser nothing. */
export function invalidApiKey(): GatewayError {
  return new GatewayError(401, "invalid_request_error", "Incorrect API key provided. Ask your Gearbox administrator for a valid key.", {
    code: "invalid_api_key",
  });
}

export function ipNotAllowed(): GatewayError {
  return new GatewayError(403, "permission_error", "Requests from this IP address are not allowed for this caller.", { code: "ip_not_allowed" });
}
