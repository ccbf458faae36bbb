/**
 * Gearbox calling the members of a fallback chain itself, in order, until one answers: the
 * client's parsed call planned for each member's provider kind through the translators (an
 * OpenAI client's call goes to Anthropic as Anthropic's, and comes back as OpenAI's), with
 * retries, the member's breaker and timeouts, and a span per attempt. Nothing has reached the
 * client yet, so a stream is fetched whole and translated completely.
 */
import type { Usage } from "../../common/canonical/types.ts";
import type { ParsedCall } from "../endpoints/spec.ts";
import { GatewayError } from "../../common/errors.ts";
import type { Headers } from "../processor/outcome.ts";
import { authHeaders, plainProvider, type Provider } from "../providers/provider.ts";
import type { ProviderRoute } from "../routing/provider-route.ts";
import type { CallPlan } from "../translators/compose.ts";
import type { RequestTrace } from "../telemetry/request-trace.ts";
import { GEARBOX, GEN_AI, genAiProviderName, HTTP } from "../../common/telemetry/tracing-attributes.ts";
import type { AttemptLog } from "./attempt-log.ts";
import type { RetryConfig } from "./config-schema.ts";
import type { FallbackMember } from "./fallback-chains.ts";
import { callProvider, type RawAnswer } from "./provider-call.ts";
import type { ProviderHealth } from "./provider-health.ts";
import { withRetries } from "./retrying.ts";

/** The name an `edge` member answers under (no provider may take it: `config/schema.ts`). */
export const EDGE_PROVIDER = "edge";

export interface FallbackContext {
  parsed: ParsedCall;
  /** The client's request bytes (a same-schema plan sends them unchanged). */
  clientBody: Buffer;
  health: ProviderHealth;
  retry: RetryConfig;
  log: AttemptLog;
  /** Why the chain is walked: the primary's route reason, kept in the answer's. */
  routeReason: string;
  requestId: string;
  trace?: RequestTrace | undefined;
  signal?: AbortSignal;
  /** `host:port` of an edge agent serving `model`, for an `edge` member. */
  edgeAgent(model: string): string | undefined;
  edgeTimeoutMs: number;
}

export interface FallbackAnswer {
  /** The member that answered, as a route decision (its provider is charged). */
  decision: ProviderRoute;
  status: number;
  contentType: string;
  /** The answer in the client's schema, JSON or SSE as the client asked. */
  body: Buffer;
  usage: Usage | undefined;
}

/** Tries `members` in order; undefined when none answered (the caller passes the primary's error on). */
export async function fallBack(members: readonly FallbackMember[], ctx: FallbackContext): Promise<FallbackAnswer | undefined> {
  for (const member of members) {
    const provider = member.kind === "edge" ? edgeProvider(ctx.edgeAgent(member.model), ctx.edgeTimeoutMs) : member.provider;
    if (!provider) {
      ctx.log.failed(EDGE_PROVIDER, "no_agent");
      continue;
    }
    const upstreamModel = member.kind === "edge" ? member.model : member.upstreamModel;
    let plan: CallPlan;
    try {
      plan = ctx.parsed.plan(provider, { upstreamModel, forceStreamUsage: true, clientBody: ctx.clientBody });
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      ctx.log.failed(provider.name, "unsupported");
      continue;
    }
    const answer = await attempt(provider, upstreamModel, plan, ctx);
    if (answer) return { ...answer, decision: { provider, upstreamModel, reason: `fallback;${ctx.routeReason}` } };
  }
  return undefined;
}

/** One member: its calls with retries; the translated answer, or undefined after logging why not. */
async function attempt(provider: Provider, upstreamModel: string, plan: CallPlan, ctx: FallbackContext): Promise<Omit<FallbackAnswer, "decision"> | undefined> {
  const url = new URL(provider.basePath + plan.upstream.path, provider.baseUrl.origin);
  const body = plan.upstream.body ?? ctx.clientBody;
  /** The failure this attempt answers: the last one logged (`openai:429`). */
  const cause = (): string => {
    const last = ctx.log.attempts.at(-1);
    return last?.cause === undefined ? "" : `${last.provider}:${last.cause}`;
  };
  const result = await withRetries<RawAnswer>({
    provider: provider.name,
    health: ctx.health,
    retry: ctx.retry,
    gated: true,
    ...(ctx.signal && { signal: ctx.signal }),
    attempt: async (n) => {
      const span = ctx.trace?.call(
        `chat ${upstreamModel}`,
        {
          [GEN_AI.operationName]: "chat",
          [GEN_AI.requestModel]: upstreamModel,
          [GEN_AI.providerName]: genAiProviderName(provider.kind, provider.name),
          [HTTP.serverAddress]: provider.baseUrl.hostname,
          [GEARBOX.upstream]: provider.name === EDGE_PROVIDER ? "edge" : "cloud",
          [GEARBOX.fallbackCause]: cause(),
          [GEARBOX.attempt]: n,
        },
        ctx.trace.current,
      );
      const headers: Headers = {
        ...plan.upstream.headers,
        ...authHeaders(provider),
        "accept-encoding": "identity",
        "x-gearbox-request-id": ctx.requestId,
        ...span?.headers(),
      };
      try {
        const raw = await callProvider(provider, url, headers, body, ctx.signal);
        span?.end(raw.status >= 400 ? { message: `${provider.name} answered ${raw.status}`, status: raw.status } : undefined, { [HTTP.status]: raw.status });
        return { status: raw.status, headers: raw.headers, value: raw };
      } catch (err) {
        span?.end(err instanceof GatewayError ? err : { message: `${provider.name} could not be reached` });
        throw err;
      }
    },
    onRetry: (failure) => ctx.log.failed(provider.name, failure),
  });
  if (result.kind !== "answer" || result.failure !== undefined || result.status >= 400) {
    ctx.log.failed(provider.name, result.failure ?? (result.kind === "answer" ? String(result.status) : "connect"));
    return undefined;
  }
  const translated = translate(plan, result.value, ctx.parsed.stream);
  if (!translated) {
    ctx.log.failed(provider.name, "unsupported");
    return undefined;
  }
  ctx.log.answered(provider.name);
  return translated;
}

/** A good answer in the client's schema: a stream translated completely, or the JSON answer. */
function translate(plan: CallPlan, raw: RawAnswer, stream: boolean): Omit<FallbackAnswer, "decision"> | undefined {
  if (stream && (raw.headers["content-type"] ?? "").match(/^(text\/event-stream|application\/x-ndjson)/)) {
    const translator = plan.stream(raw.status, raw.headers);
    const pushed = translator.push(raw.body);
    const ended = translator.end();
    return {
      status: 200,
      contentType: "text/event-stream",
      body: Buffer.concat([pushed.body ?? raw.body, ended.body ?? Buffer.alloc(0)]),
      usage: ended.usage ?? pushed.usage,
    };
  }
  const translated = plan.response(raw.status, raw.headers, raw.body);
  if (translated.error || (translated.status ?? 200) >= 400) return undefined;
  return { status: translated.status ?? raw.status, contentType: "application/json", body: translated.body ?? raw.body, usage: translated.usage };
}

/** An edge agent as a provider: OpenAI's API, no key, no price. */
function edgeProvider(address: string | undefined, timeoutMs: number): Provider | undefined {
  if (address === undefined) return undefined;
  return plainProvider({ name: EDGE_PROVIDER, kind: "openai", baseUrl: new URL(`http://${address}/v1`), timeoutMs });
}
