/**
 * Client headers meant for one provider's API. An SDK sends them to the API it speaks
 * (`anthropic-version`, `anthropic-beta` from `@anthropic-ai/sdk`; `openai-organization`,
 * `openai-project`, `openai-beta` from `openai`; `x-goog-api-client` from `@google/genai`) along
 * with its `x-stainless-*` telemetry (both Stainless-built SDKs). They mean something only to that
 * API: when the call is translated to another provider they are not forwarded. A same-schema hop
 * keeps them (Anthropic → Anthropic needs the client's version and betas).
 */
import type { BackendProtocol } from "./select.ts";

/** Headers (lower case) or prefixes (ending in `-`) that belong to one provider API. */
const OWNED: Readonly<Record<BackendProtocol, readonly string[]>> = {
  anthropic: ["anthropic-"],
  openai: ["openai-"],
  gemini: ["x-goog-"],
  ollama: [],
};

/** SDK telemetry: no provider but the one the SDK was built for reads it, and none needs it. */
const SDK_TELEMETRY = ["x-stainless-"];

const matches = (name: string, rule: string) => (rule.endsWith("-") ? name.startsWith(rule) : name === rule);

/**
 * The client headers not to forward to `target` when the client spoke `client`'s API: the
 * client API's own headers and SDK telemetry, unless the target speaks the client's API.
 */
export function foreignClientHeaders(headerNames: Iterable<string>, client: BackendProtocol, target: BackendProtocol): string[] {
  if (client === target) return [];
  const drop = [...OWNED[client], ...SDK_TELEMETRY];
  const out: string[] = [];
  for (const raw of headerNames) {
    const name = raw.toLowerCase();
    if (!name.startsWith(":") && drop.some((rule) => matches(name, rule))) out.push(name);
  }
  return out;
}
