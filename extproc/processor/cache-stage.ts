/**
 * The caches' part in one request: the exact cache first, then the semantic cache; a hit is
 * the client's whole answer (no routing, no admission, nothing upstream). After a miss, a
 * complete 200 answer — a JSON body, or a stream reassembled when it ended cleanly — is stored
 * in the caches that missed. Edge-cascade answers are not stored (the caller decides). Neither
 * cache ever fails a request: trouble is a miss.
 */
import type { GatewayConfig } from "../config/load.ts";
import type { ParsedCall } from "../endpoints/spec.ts";
import type { ErrorResponse } from "../../common/errors.ts";
import { cacheUse, hitResponse, storeAnswer } from "../cache/exact-cache.ts";
import type { CacheKey, ResponseCache } from "../cache/response-cache.ts";
import { StreamAccumulator } from "../cache/stream-accumulator.ts";
import { semanticUse, type SemanticCache, type SemanticLookup } from "../cache/semantic/semantic-cache.ts";
import { classifyIntent } from "../routing/intent/classify.ts";
import type { Headers } from "./outcome.ts";

/** What the caches did for a request, for the request log and metrics. */
export type CacheResult = "hit" | "miss" | "bypass";
/** Which cache answered. */
export type CacheLayer = "exact" | "semantic";

/** What the caches did for one request, as the request record reads it. */
export interface CacheOutcome {
  /** `undefined`: no cache took part (off, not cacheable, not a chat call). */
  readonly result: CacheResult | undefined;
  /** The cache that answered a hit. */
  readonly layer: CacheLayer | undefined;
  /** A semantic hit's cosine similarity to the stored question. */
  readonly similarity: number | undefined;
  /** The stored completion a hit answered with (its usage is what the cloud would have billed). */
  readonly hitCompletion: string | undefined;
}

export interface CacheDeps {
  /** The exact response cache (`cache.exact`); absent → no exact caching. */
  cache?: ResponseCache;
  /** The semantic cache (`cache.semantic`); absent → no semantic caching. */
  semanticCache?: SemanticCache;
}

export class RequestCache implements CacheOutcome {
  /** `undefined`: no cache took part (off, not cacheable, not a chat call). */
  result: CacheResult | undefined;
  /** The stored completion a hit answered with (its usage is what the cloud would have billed). */
  hitCompletion: string | undefined;
  /** The cache that answered a hit. */
  layer: CacheLayer | undefined;
  /** A semantic hit's cosine similarity to the stored question. */
  similarity: number | undefined;
  private exactKey: CacheKey | undefined;
  private semanticKey: SemanticLookup | undefined;
  private stream: StreamAccumulator | undefined;

  constructor(
    private readonly deps: CacheDeps,
    private readonly config: GatewayConfig,
  ) {}

  get hit(): boolean {
    return this.result === "hit";
  }

  /**
   * Looks the request up. `undefined`: no cache takes part, go on at once; otherwise a promise of
   * the immediate response a hit becomes, or `undefined` after a miss (the answer will be stored).
   */
  lookup(endpoint: string, parsed: ParsedCall, tenant: string, headers: Headers, requestId: string): Promise<ErrorResponse | undefined> | undefined {
    const header = headers["x-gearbox-cache"];
    const cache = this.deps.cache;
    const exact = cache && cacheUse(this.config, endpoint, parsed, tenant, header);
    const semantic = this.semanticUse(endpoint, parsed, tenant, header);
    const uses = [exact?.kind, semantic?.kind];
    this.result = uses.includes("lookup") ? "miss" : uses.includes("bypass") ? "bypass" : undefined;
    if (this.result !== "miss") return undefined;
    const exactLookup = cache && exact?.kind === "lookup" ? cache.get(exact.key) : Promise.resolve(undefined);
    return exactLookup.then(async (hit) => {
      if (hit) return this.answer(hit.completion, "exact", parsed, requestId);
      if (exact?.kind === "lookup") this.exactKey = exact.key;
      if (!this.deps.semanticCache || semantic?.kind !== "lookup") return undefined;
      const similar = await this.deps.semanticCache.lookup(semantic);
      if (similar) {
        this.similarity = similar.similarity;
        return this.answer(similar.completion, "semantic", parsed, requestId);
      }
      this.semanticKey = semantic;
      return undefined;
    });
  }

  private answer(completion: string, layer: CacheLayer, parsed: ParsedCall, requestId: string): ErrorResponse {
    this.result = "hit";
    this.layer = layer;
    this.hitCompletion = completion;
    const response = hitResponse(completion, parsed, requestId);
    if (layer === "semantic") {
      response.headers["x-gearbox-cache"] = "semantic-hit";
      response.headers["x-gearbox-cache-similarity"] = (this.similarity ?? 0).toFixed(4);
    }
    return response;
  }

  /** The semantic cache's part, scoped by the request's intent label (the built-in classifier's, never the client's hint). */
  private semanticUse(endpoint: string, parsed: ParsedCall, tenant: string, header: string | undefined): ReturnType<typeof semanticUse> {
    const semantic = this.deps.semanticCache;
    if (!semantic || !this.config.cache.semantic.enable || parsed.call.endpoint !== "chat") return undefined;
    const intent = classifyIntent(parsed.call.request.messages).intent;
    return semanticUse(this.config, endpoint, parsed, tenant, intent, header, semantic.embedderName);
  }

  /** The answer starts streaming: with something to store, reassemble it. */
  streamStarted(status: number): void {
    if (this.storing && status === 200) this.stream = new StreamAccumulator();
  }

  /** A chunk of the client's stream; at the end, a clean stream's completion is stored. */
  streamed(body: Buffer, endOfStream: boolean): void {
    if (!this.stream) return;
    this.stream.push(body);
    if (!endOfStream) return;
    const completion = this.stream.end();
    this.stream = undefined;
    if (completion !== undefined) this.store(completion);
  }

  /** A complete 200 answer (OpenAI chat completion JSON) after a miss; read as text only when a cache keeps it. */
  store(completion: string | Buffer): void {
    if (!this.storing) return;
    const text = typeof completion === "string" ? completion : completion.toString("utf8");
    if (this.deps.cache && this.exactKey) storeAnswer(this.deps.cache, this.config, this.exactKey, text);
    if (this.deps.semanticCache && this.semanticKey) this.deps.semanticCache.store(this.semanticKey, text);
  }

  private get storing(): boolean {
    return this.exactKey !== undefined || this.semanticKey !== undefined;
  }
}
