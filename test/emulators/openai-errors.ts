/**
 * Error bodies the OpenAI emulator writes itself (auth, routing, validation). They follow the
 * shape of the recorded OpenAI error (`vercel-ai/openai/reasoning-model-legacy-parameter-error`):
 * `{"error":{"message","type","param","code"}}`. The emulator does not share Gearbox's own error
 * code on purpose: it stands for the provider, not for the gateway under test.
 */

/** OpenAI's error body. */
export interface UpstreamErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** An error the emulator answers with: status and body. */
export interface UpstreamError {
  status: number;
  body: UpstreamErrorBody;
}

function upstreamError(status: number, message: string, type: string, param: string | null, code: string | null): UpstreamError {
  return { status, body: { error: { message, type, param, code } } };
}

/** 401 for a request without credentials, worded as OpenAI words it. */
export function missingApiKey(): UpstreamError {
  return upstreamError(
    401,
    "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    "invalid_request_error",
    null,
    null,
  );
}

/** 401 for a wrong key; like OpenAI, only the key's ends are shown. */
export function invalidApiKey(key: string): UpstreamError {
  const masked = key.length > 8 ? `${key.slice(0, 3)}${"*".repeat(key.length - 7)}${key.slice(-4)}` : "***";
  return upstreamError(
    401,
    `Incorrect API key provided: ${masked}. You can find your API key at https://platform.openai.com/account/api-keys.`,
    "invalid_request_error",
    null,
    "invalid_api_key",
  );
}

/** 404 for a method and path the API does not have. */
export function invalidUrl(method: string, path: string): UpstreamError {
  return upstreamError(404, `Invalid URL (${method} ${path})`, "invalid_request_error", null, null);
}

/** 400 for a body that is not JSON. */
export function invalidJson(): UpstreamError {
  return upstreamError(
    400,
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
    "invalid_request_error",
    null,
    null,
  );
}

/** 400 naming the request field at fault. */
export function invalidParam(param: string, message: string): UpstreamError {
  return upstreamError(400, message, "invalid_request_error", param, null);
}

/** 500 for a misuse of the emulator itself (e.g. a stream asked of a fixture with no recorded stream). */
export function emulatorMisuse(message: string): UpstreamError {
  return upstreamError(500, `OpenAI emulator: ${message}`, "server_error", null, "emulator_error");
}
