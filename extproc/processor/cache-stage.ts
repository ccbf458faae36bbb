/**
 * The caches' part in one request: the exact cache first, then the semantic cache; a hit is
 * the client's whole answer (no routing, no admission, nothing upstream). After a miss, a
 * complete 200 answer — a JSON body, or a stream reassembled when it ended cleanly — is stored
 * in the caches that missed. Edge-cascade answers are not stored (the caller decides).
 */
import type { GatewayConfig } from "../config/load.ts";
import type { ParsedCall } from "../endpoints/spec.ts";
import type { ErrorResponse } from "../errors.ts";
import { cacheUse, hitResponse, storeAnswer } from "../cache/exact-cache.ts";
import type { CacheKey, ResponseCache } from "../cache/response-cache.ts";
import { StreamAccumulator } from "../cache/stream-accumulator.ts";
import type { Headers } from "./outcome.ts";

/** What the caches did for a request, for the request log and metrics. */
export type CacheResult = "hit" | "miss" | "bypass";

export interface CacheDeps {
  /** The exact response cache (`cache.exact`); absent → no exact caching. */
  cache?: ResponseCache;
}

export class RequestCache {
  /** `undefined`: no cache took part (off, not cacheable, not a chat call). */
  result: CacheResult | undefined;
  /** The stored completion a hit answered with (its usage is what the cloud would have billed). */
  hitCompletion: string | undefined;
  private exactKey: CacheKey | undefined;
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
    const cache = this.deps.cache;
    const use = cache && cacheUse(this.config, endpoint, parsed, tenant, headers["x-gearbox-cache"]);
    this.result = use?.kind === "lookup" ? "miss" : use?.kind;
    if (!cache || use?.kind !== "lookup") return undefined;
    return cache.get(use.key).then((hit) => {
      if (!hit) {
        this.exactKey = use.key;
        return undefined;
      }
      this.result = "hit";
      this.hitCompletion = hit.completion;
      return hitResponse(hit.completion, parsed, requestId);
    });
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

  /** A complete 200 answer (OpenAI chat completion JSON) after a miss. */
  store(completion: string): void {
    if (this.deps.cache && this.exactKey) storeAnswer(this.deps.cache, this.config, this.exactKey, completion);
  }

  private get storing(): boolean {
    return this.exactKey !== undefined;
  }
}
