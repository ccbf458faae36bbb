/**
 * The semantic cache as the processor uses it: which requests look up (under what scope, with
 * which question and threshold), and the lookup itself — embed the question, take the nearest
 * entries of the scope at or above the threshold, and reuse the first that passes the entity
 * guard, the fingerprint and (optionally) the edge model's verification. Transport-free: the
 * processor turns a hit into a response (`hitResponse` in `exact-cache.ts` does for both caches).
 *
 * What is cached: OpenAI chat completions whose last message is a user message of text only, no
 * longer than `MAX_QUESTION_CHARS`, asking for a repeatable answer (the exact cache's `cacheable`
 * rule) and without tools — a tool call carries the question's arguments verbatim, and a
 * paraphrase's arguments differ. The question is the last user message; everything else that
 * shapes the answer (the exact cache's key fields, earlier turns included) and the embedder's
 * name make the scope, so entries are only ever matched within a scope.
 *
 * The intent label is a guard, not part of the scope: the classifier's label flips between
 * paraphrases when it is unsure ("How do I reverse a tuple" → translate@0.48, "How can I…" →
 * qa@0.57), which as a scope would lose those hits. Two questions whose labels are both sure
 * (a pattern, a hint, or the model at ≥ `SURE_INTENT`) and differ never share an answer.
 */
import { createHash, randomUUID } from "node:crypto";
import type { ChatRequest } from "../../../common/canonical/types.ts";
import type { GatewayConfig } from "../../config/load.ts";
import type { SemanticCacheConfig } from "../../config/schema.ts";
import type { ParsedCall } from "../../endpoints/spec.ts";
import { isObject } from "../../../common/schemas/fields.ts";
import type { Logger } from "../../../common/telemetry/logger.ts";
import { cacheable, canonicalJson } from "../cache-key.ts";
import type { Embedder } from "./embedder.ts";
import { entitiesAgree, extractEntities } from "./entity-guard.ts";
import { fingerprint, fingerprintsAgree } from "./fingerprint.ts";
import { classifyIntent, type IntentResult } from "../../routing/intent/classify.ts";
import type { SemanticStore } from "./semantic-store.ts";
import type { Verifier } from "./verifier.ts";

/** The shipped default threshold (`cache.semantic.threshold`), picked on the paraphrase bench. */
export const DEFAULT_SEMANTIC_THRESHOLD = 0.95;
/** Longer questions are not looked up: a pasted document is not a question to paraphrase. */
export const MAX_QUESTION_CHARS = 2000;
/** How many nearest entries a lookup checks. */
export const NEAREST_K = 4;
/** The model's confidence at which an intent label is sure enough to keep two questions apart. */
export const SURE_INTENT = 0.8;

export interface SemanticLookup {
  kind: "lookup";
  tenant: string;
  scope: string;
  question: string;
  threshold: number;
}

/** The semantic cache's part in a request: look up, or stay out of it (`x-gearbox-cache: bypass`). */
export type SemanticUse = SemanticLookup | { kind: "bypass" };

/** Request fields that do not change the answer, or are the question itself. */
const NOT_SCOPED = new Set<keyof ChatRequest>(["stream", "includeUsage", "user", "metadata", "messages"]);

/**
 * The semantic cache's part in a request, or `undefined` when it has none (off, not an OpenAI
 * chat completion, not repeatable, tools, no text question). `embedder` names the vector space.
 */
export function semanticUse(
  config: GatewayConfig,
  endpoint: string,
  parsed: ParsedCall,
  tenant: string,
  intent: string,
  header: string | undefined,
  embedder: string,
): SemanticUse | undefined {
  const options = config.cache.semantic;
  if (!options.enable || endpoint !== "chat_completions" || parsed.call.endpoint !== "chat") return undefined;
  if (header?.trim().toLowerCase() === "bypass") return { kind: "bypass" };
  const request = parsed.call.request;
  if (!cacheable(request, config.cache.exact.any_temperature) || (request.tools !== undefined && request.tools.length > 0)) return undefined;
  const last = request.messages.at(-1);
  if (last?.role !== "user") return undefined;
  const question =
    typeof last.content === "string" ? last.content : last.content.every((p) => p.type === "text") ? last.content.map((p) => p.text).join("\n") : undefined;
  if (question === undefined || question.trim() === "" || question.length > MAX_QUESTION_CHARS) return undefined;
  const scoped: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(request)) if (!NOT_SCOPED.has(field as keyof ChatRequest)) scoped[field] = value;
  scoped.context = request.messages.slice(0, -1);
  if (last.name !== undefined) scoped.name = last.name;
  const scope = createHash("sha256")
    .update(canonicalJson({ tenant, embedder, request: scoped }))
    .digest("hex");
  return { kind: "lookup", tenant, scope, question, threshold: thresholdFor(options, tenant, intent) };
}

/** The tenant's threshold, else the intent's, else the default. */
export function thresholdFor(options: SemanticCacheConfig, tenant: string, intent: string): number {
  return options.thresholds.tenants[tenant] ?? options.thresholds.intents[intent] ?? options.threshold;
}

export interface SemanticHit {
  completion: string;
  similarity: number;
  entryId: string;
}

/** Counters for metrics: lookups (`hit`, `miss`, `embed_error`) and candidate rejections by reason. */
export interface SemanticStats {
  hit: number;
  miss: number;
  embed_error: number;
  guard_rejected: number;
  intent_rejected: number;
  fingerprint_rejected: number;
  verify_rejected: number;
  stored: number;
  store_skipped: number;
}

export interface SemanticCacheDeps {
  store: SemanticStore;
  embedder: Embedder;
  /** Present when `verify.enable`. */
  verifier?: Verifier;
  config: SemanticCacheConfig;
  logger: Logger;
  now?: () => number;
}

export class SemanticCache {
  readonly stats: SemanticStats = {
    hit: 0,
    miss: 0,
    embed_error: 0,
    guard_rejected: 0,
    intent_rejected: 0,
    fingerprint_rejected: 0,
    verify_rejected: 0,
    stored: 0,
    store_skipped: 0,
  };
  /** The question's vector from its lookup, reused when its answer is stored. */
  private readonly vectors = new WeakMap<SemanticLookup, Float32Array>();
  private readonly now: () => number;

  constructor(private readonly deps: SemanticCacheDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** The embedder's name: part of every scope (vectors of two embedders never meet). */
  get embedderName(): string {
    return this.deps.embedder.name;
  }

  /** The reusable answer for `use`, or `undefined` (a miss, whatever went wrong). */
  async lookup(use: SemanticLookup, signal?: AbortSignal): Promise<SemanticHit | undefined> {
    const vector = await this.vectorOf(use, signal);
    if (vector === undefined) {
      this.stats.miss++;
      return undefined;
    }
    const matches = await this.deps.store.nearest(use.scope, vector, NEAREST_K, use.threshold);
    const { config } = this.deps;
    const entities = config.entity_guard ? extractEntities(use.question) : undefined;
    const print = config.fingerprint ? fingerprint(use.question) : undefined;
    const intent = matches.length > 0 ? questionIntent(use.question) : undefined;
    for (const { entry, similarity } of matches) {
      if (intent && intentsConflict(intent, questionIntent(entry.question))) {
        this.stats.intent_rejected++;
        continue;
      }
      if (entities && !entitiesAgree(entities, use.question, extractEntities(entry.question), entry.question).ok) {
        this.stats.guard_rejected++;
        continue;
      }
      if (print && !fingerprintsAgree(print, fingerprint(entry.question)).ok) {
        this.stats.fingerprint_rejected++;
        continue;
      }
      if (this.deps.verifier) {
        const verdict = await this.deps.verifier.verify(use.question, entry.question, signal);
        if (verdict.kind !== "same") {
          this.stats.verify_rejected++;
          this.deps.logger.debug({ entry: entry.id, verdict }, "semantic cache: not verified");
          // A failed verification (timeout, no agent) would fail the same way for the next candidate.
          if (verdict.kind === "failed") break;
          continue;
        }
      }
      this.stats.hit++;
      return { completion: entry.completion, similarity, entryId: entry.id };
    }
    this.stats.miss++;
    return undefined;
  }

  /**
   * Stores a completed answer (OpenAI chat completion JSON with choices, within
   * `max_entry_bytes`) for `use`'s question. Fire and forget: never fails the request.
   */
  store(use: SemanticLookup, completion: string): void {
    if (!validCompletion(completion, this.deps.config.max_entry_bytes)) {
      this.stats.store_skipped++;
      return;
    }
    void this.insert(use, completion);
  }

  private async insert(use: SemanticLookup, completion: string): Promise<void> {
    const vector = this.vectors.get(use) ?? (await this.vectorOf(use));
    if (vector === undefined) return;
    const createdAt = this.now();
    await this.deps.store.insert({
      id: randomUUID(),
      tenant: use.tenant,
      scope: use.scope,
      vector,
      question: use.question,
      completion,
      createdAt,
      expiresAt: createdAt + this.deps.config.ttl_ms,
    });
    this.stats.stored++;
  }

  private async vectorOf(use: SemanticLookup, signal?: AbortSignal): Promise<Float32Array | undefined> {
    const cached = this.vectors.get(use);
    if (cached) return cached;
    try {
      const [vector] = await this.deps.embedder.embed([use.question], signal);
      if (vector === undefined) throw new Error("the embedder returned no vector");
      this.vectors.set(use, vector);
      return vector;
    } catch (err) {
      this.stats.embed_error++;
      this.deps.logger.warn({ err, embedder: this.deps.embedder.name }, "semantic cache: embedding failed (miss)");
      return undefined;
    }
  }
}

function questionIntent(question: string): IntentResult {
  return classifyIntent([{ role: "user", content: question }]);
}

/** Both labels sure and different: the questions want different kinds of answer. */
export function intentsConflict(a: IntentResult, b: IntentResult): boolean {
  const sure = (r: IntentResult) => r.intent !== "unknown" && (r.source !== "model" || r.confidence >= SURE_INTENT);
  return a.intent !== b.intent && sure(a) && sure(b);
}

function validCompletion(completion: string, maxBytes: number): boolean {
  if (Buffer.byteLength(completion) > maxBytes) return false;
  try {
    const json: unknown = JSON.parse(completion);
    return isObject(json) && Array.isArray(json.choices) && json.choices.length > 0;
  } catch {
    return false;
  }
}
