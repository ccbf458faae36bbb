/**
 * A buffered (not streamed) answer from the cloud as the client's: translated back to the
 * client's schema, a provider error turned OpenAI-shaped unless the translator already shaped
 * it for the client, and any key the provider quotes in an error redacted.
 */
import type { Usage } from "../../common/canonical/types.ts";
import { toErrorResponse, type GatewayError } from "../../common/errors.ts";
import { redactKey } from "../providers/provider.ts";
import type { ProviderRoute } from "../routing/provider-route.ts";
import type { CallPlan } from "../translators/compose.ts";
import type { Headers, Mutation } from "./outcome.ts";

export interface FinalAnswer {
  /** The body and headers to put in place of the provider's; `undefined`: pass them on as they are. */
  mutation: Mutation | undefined;
  usage: Usage | undefined;
  /** The provider's error, as Gearbox reports it. */
  error: GatewayError | undefined;
  /** The completion to cache, as the client gets it: set only for a clean 200 answer. */
  cacheable: Buffer | undefined;
}

export function finalAnswer(
  plan: CallPlan,
  status: number,
  headers: Headers,
  chunk: Buffer,
  decision: ProviderRoute | undefined,
  requestId: string,
): FinalAnswer {
  const translated = plan.response(status, headers, chunk);
  let body = translated.body;
  if (translated.error && !translated.error.clientShaped) body = toErrorResponse(translated.error.error, requestId).body;
  if (status >= 400 && decision) {
    // Providers quote (masked) keys in auth errors; none reaches the client.
    const text = (body ?? chunk).toString("utf8");
    const redacted = redactKey(text, decision.provider);
    if (redacted !== text) body = Buffer.from(redacted);
  }
  const clean = status === 200 && !translated.error && (translated.status ?? 200) === 200;
  let mutation: Mutation | undefined;
  if (body) {
    const setHeaders: Headers = { "content-type": "application/json", "content-length": String(body.length) };
    if (translated.status !== undefined && translated.status !== status) setHeaders[":status"] = String(translated.status);
    mutation = { body, setHeaders };
  }
  return { mutation, usage: translated.usage, error: translated.error?.error, cacheable: clean ? (body ?? chunk) : undefined };
}
