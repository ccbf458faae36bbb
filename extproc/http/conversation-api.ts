/**
 * `GET` and `DELETE /v1/conversations/{id}` on the front door: read or forget a conversation the
 * gateway keeps, scoped to the caller's tenant (the call key says which; without governance,
 * tenant `default`). Another tenant's conversation is a 404 like one that does not exist. Through
 * Envoy this path is not Gearbox's (OpenAI has an API of that name): it passes through.
 */
import type http from "node:http";
import { GatewayError } from "../../common/errors.ts";
import { messageToOpenAI } from "../../common/schemas/openai-chat-emit.ts";
import { conversationIdOf, type Conversations } from "../conversation/conversations.ts";
import { authenticate } from "../governance/auth.ts";
import type { Governance } from "../processor/processor.ts";
import { canonicalIp } from "../client-ip.ts";
import { plainHeaders } from "./headers.ts";

export const CONVERSATIONS_PATH = "/v1/conversations/";

/** What the route answers: a JSON value and its status, or the error. */
export type ApiAnswer = { status: number; body: unknown } | { error: GatewayError };

export async function conversationApi(
  req: http.IncomingMessage,
  path: string,
  conversations: Conversations | undefined,
  governance: Governance | undefined,
): Promise<ApiAnswer> {
  if (req.method !== "GET" && req.method !== "DELETE")
    return {
      error: new GatewayError(405, "invalid_request_error", "Only GET and DELETE are allowed here.", {
        code: "method_not_allowed",
        headers: { allow: "GET, DELETE" },
      }),
    };
  if (!conversations?.settings.enable)
    return { error: new GatewayError(404, "not_found_error", "Conversations are off on this gateway.", { code: "conversations_off" }) };
  let tenant = "default";
  if (governance) {
    const address = canonicalIp(req.socket.remoteAddress);
    const caller = await authenticate({ headers: plainHeaders(req.headers), ...(address !== undefined && { sourceAddress: address }) }, governance.auth);
    if (!caller.ok) return { error: caller.errors[0] ?? new GatewayError(401, "authentication_error", "Authentication failed.") };
    tenant = caller.value.tenant.id;
  }
  const raw = decodeURIComponent(path.slice(CONVERSATIONS_PATH.length));
  const id = conversationIdOf({ conversation_id: raw }, {});
  if (!id.ok || id.value === undefined)
    return { error: id.ok ? new GatewayError(400, "invalid_request_error", "A conversation id is required.") : (id.errors[0] as GatewayError) };
  const notFound = new GatewayError(404, "not_found_error", `No conversation '${id.value}'.`, { code: "conversation_not_found" });
  if (req.method === "DELETE") {
    const deleted = await conversations.store.delete(tenant, id.value);
    return deleted ? { status: 200, body: { id: id.value, object: "conversation.deleted", deleted: true } } : { error: notFound };
  }
  const stored = await conversations.store.get(tenant, id.value);
  if (!stored) return { error: notFound };
  return {
    status: 200,
    body: {
      id: id.value,
      object: "conversation",
      messages: stored.messages.map(messageToOpenAI),
      dropped: stored.dropped,
      last_target: stored.lastTarget ?? null,
      summary: stored.summary ? { text: stored.summary.text, covers_messages: stored.summary.through, by: stored.summary.by } : null,
    },
  };
}
