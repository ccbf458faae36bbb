/**
 * What a Gemini function call carries besides its name and arguments, kept in the canonical
 * tool-call id so that it survives a round trip through any client schema: OpenAI and Anthropic
 * clients send back only the id of a call (in the assistant's `tool_calls` / `tool_use` and in
 * the tool result), never provider data.
 *
 * - `thoughtSignature`: Gemini 3 rejects a history whose function calls lack the signature it
 *   issued, and Gemini 2.5 reasons better with it (Google: "pass it back exactly as received").
 * - `id`: Gemini's own `functionCall.id`, to be sent back on the call and on its
 *   `functionResponse`. Ids Gemini did not issue (`call_<n>`, another provider's) are not sent:
 *   Gemini matches those results by name.
 *
 * A call with neither keeps the plain id (`call_<n>`). Otherwise the id is
 * `<base>__gx<base64url(JSON)>`: only `[A-Za-z0-9_-]`, so the same history still passes
 * Anthropic's tool-id pattern if it is later routed there. The signature is kept byte for byte.
 */
import { isObject } from "../../../common/schemas/fields.ts";

const MARK = "__gx";

export interface GeminiCallData {
  /** Gemini's `functionCall.id`. */
  id?: string;
  thoughtSignature?: string;
}

/** The canonical id of a call: `base` alone when there is nothing to carry. */
export function encodeCallId(base: string, data: GeminiCallData): string {
  if (data.id === undefined && data.thoughtSignature === undefined) return base;
  const packed: Record<string, string> = {};
  if (data.id !== undefined) packed.i = data.id;
  if (data.thoughtSignature !== undefined) packed.s = data.thoughtSignature;
  return `${base}${MARK}${Buffer.from(JSON.stringify(packed), "utf8").toString("base64url")}`;
}

/** What `encodeCallId` packed into an id; any other id carries nothing. */
export function decodeCallId(id: string): GeminiCallData {
  const at = id.lastIndexOf(MARK);
  if (at < 0) return {};
  let packed: unknown;
  try {
    packed = JSON.parse(Buffer.from(id.slice(at + MARK.length), "base64url").toString("utf8"));
  } catch {
    return {};
  }
  if (!isObject(packed)) return {};
  const data: GeminiCallData = {};
  if (typeof packed.i === "string") data.id = packed.i;
  if (typeof packed.s === "string") data.thoughtSignature = packed.s;
  return data;
}
