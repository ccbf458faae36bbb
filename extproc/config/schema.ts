/**
 * The `gearbox.yaml` schema. Every section is optional: `gearbox serve` with no file runs on
 * these defaults. Objects are strict, so a misspelt key is an error that names it.
 */
import { dataBoundarySchema } from "../boundary/policy.ts";
import { z } from "zod";
import { tenantSchema } from "../governance/config-schema.ts";
import { providerSchema } from "../providers/config-schema.ts";
import { routePolicyShape } from "../routing/policy/schema.ts";
import { resilienceSchema } from "../resilience/config-schema.ts";
import { devicesSchema } from "../devices/config-schema.ts";
import { conversationsSchema } from "../conversation/config-schema.ts";

const port = z.number().int().min(0).max(65535);

const similarity = z.number().gt(0).max(1);

/** `cache.semantic`: see `extproc/cache/semantic/semantic-cache.ts`. */
export const semanticCacheSchema = z.strictObject({
  enable: z.boolean().default(false),
  /** The least cosine similarity of a reusable entry (tuned on the paraphrase bench, `bench/RESULTS.md`). */
  threshold: similarity.default(0.95),
  /** Per-intent and per-tenant thresholds; a tenant's wins over an intent's. */
  thresholds: z
    .strictObject({ intents: z.record(z.string().min(1), similarity).default({}), tenants: z.record(z.string().min(1), similarity).default({}) })
    .prefault({}),
  embedder: z
    .strictObject({
      /** `builtin`: offline hashed n-grams (EN + ZH); `edge`: an edge agent's `/v1/embeddings`; `provider`: a provider's. */
      kind: z.enum(["builtin", "edge", "provider"]).default("builtin"),
      /** The embedding model (`edge`, `provider`). */
      model: z.string().min(1).optional(),
      /** The provider by name (`provider`). */
      provider: z.string().min(1).optional(),
      /** The model's vector length (`edge`, `provider`): the index is sized before the first answer. */
      dimensions: z.number().int().min(8).max(8192).optional(),
      timeout_ms: z.number().int().positive().max(10_000).default(200),
    })
    .prefault({})
    .refine((e) => e.kind === "builtin" || e.model !== undefined, { message: "an edge or provider embedder needs a model", path: ["model"] })
    .refine((e) => e.kind === "builtin" || e.dimensions !== undefined, {
      message: "an edge or provider embedder needs the model's dimensions",
      path: ["dimensions"],
    })
    .refine((e) => e.kind !== "provider" || e.provider !== undefined, { message: "a provider embedder needs a provider", path: ["provider"] }),
  /** Numbers, dates, names, code identifiers… of both questions must agree. */
  entity_guard: z.boolean().default(true),
  /** Question type, negation and comparison must agree. */
  fingerprint: z.boolean().default(true),
  /** Ask the edge model whether the two questions want the same answer before reuse. */
  verify: z
    .strictObject({
      enable: z.boolean().default(false),
      /** The edge model to ask; default `edge.default_model`. */
      model: z.string().min(1).optional(),
      timeout_ms: z.number().int().positive().max(10_000).default(300),
      /** The least probability of "yes" that verifies. */
      min_confidence: z.number().min(0).max(1).default(0.7),
    })
    .prefault({}),
  ttl_ms: z
    .number()
    .int()
    .positive()
    .default(60 * 60_000),
  /** The in-memory store's total size. */
  max_bytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
  max_entries: z.number().int().positive().default(100_000),
  /** Answers larger than this are not stored. */
  max_entry_bytes: z
    .number()
    .int()
    .positive()
    .default(256 * 1024),
  index: z
    .strictObject({
      quantization: z.enum(["i8", "f16"]).default("i8"),
      /** HNSW graph connectivity (M). */
      connectivity: z.number().int().min(2).max(64).default(16),
      /** Candidates kept while searching (HNSW ef): recall for latency. */
      expansion_search: z.number().int().min(8).max(1024).default(64),
    })
    .prefault({}),
});

const intentList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

export const routeSchema = z.strictObject({
  // Policy layers beyond the brief's rules: heuristic, dynamic thresholds, plugins, client hints.
  ...routePolicyShape,
  rules: z
    .array(
      z.strictObject({
        when: z.strictObject({
          intent: intentList.optional(),
          estimated_complexity: z.enum(["low", "medium", "high"]).optional(),
        }),
        target: z.enum(["edge", "cloud"]),
      }),
    )
    .default([]),
  fallback: z
    .strictObject({
      enable: z.boolean().default(true),
      confidence_threshold: z.number().min(0).max(1).default(0.6),
      upgrade_target: z.enum(["cloud"]).default("cloud"),
    })
    .default({ enable: true, confidence_threshold: 0.6, upgrade_target: "cloud" }),
  /** Ask the edge model for the intent when the built-in classifier has no confident label. */
  edge_intent: z
    .strictObject({
      enable: z.boolean().default(false),
      /** The edge model to ask; default `edge.default_model`. */
      model: z.string().min(1).optional(),
      /** The most the decision waits for it; the built-in intent stands after that. */
      timeout_ms: z.number().int().positive().max(10_000).default(300),
      /** Edge labels under this confidence are not used. */
      min_confidence: z.number().min(0).max(1).default(0.5),
    })
    .prefault({}),
});

/** `telemetry.tracing`: one trace per request across ext_proc, the edge agent and the control plane. */
export const tracingSchema = z.strictObject({
  enable: z.boolean().default(false),
  /** OTLP gRPC endpoint; default `OTEL_EXPORTER_OTLP_ENDPOINT`, else `http://localhost:4317`. */
  endpoint: z.url({ protocol: /^https?$/ }).optional(),
  /** Share of new traces recorded; a request with a `traceparent` follows its sampled flag (parent-based). */
  sample_ratio: z.number().min(0).max(1).default(1),
  /** `service.name` of the spans (default `gearbox`). */
  service_name: z.string().min(1).optional(),
});

export const configSchema = z.strictObject({
  /** The default provider by name: switching providers is this one line. */
  provider: z.string().min(1).optional(),
  listen: z
    .strictObject({
      host: z.string().default("0.0.0.0"),
      extproc_port: port.default(50051),
      http_port: port.default(8080),
      admin_port: port.default(8081),
      metrics_port: port.default(9464),
      xds_port: port.default(18000),
      edge_port: port.default(8088),
    })
    .prefault({}),
  providers: z.array(providerSchema).default([]),
  route: routeSchema.prefault({}),
  /** Edge agents Gearbox may send low-gear requests to (static until the control plane feeds them). */
  edge: z
    .strictObject({
      agents: z
        .array(
          z.strictObject({
            /** `ip:port` (or `host:port`) of the agent's OpenAI-compatible API. */
            address: z.string().regex(/^[^:/\s]+:\d{1,5}$/, "must be host:port"),
            /** Models the agent serves. */
            models: z.array(z.string().min(1)).min(1),
            /** The Kubernetes node it runs on (agents on the caller's node are preferred). */
            node: z.string().optional(),
          }),
        )
        .default([]),
      /**
       * `gearbox serve` only: an edge agent in the same process (llama.cpp), registered with the
       * embedded control plane like any agent. `model`: a GGUF file or an `hf:` URI; `id`: the
       * model id clients use (default the file name without `.gguf`); `port`: its HTTP API on
       * 127.0.0.1 (default `listen.edge_port`; 0 = a free port).
       */
      local: z
        .strictObject({
          model: z.string().min(1),
          id: z.string().min(1).optional(),
          port: port.optional(),
          threads: z.number().int().positive().max(256).optional(),
          context_length: z.number().int().positive().optional(),
        })
        .optional(),
      /** The edge model edge-routed requests use, unless the request names an edge model. */
      default_model: z.string().min(1).optional(),
      /** The cloud model an upgrade uses when the request named an edge model. */
      fallback_model: z.string().min(1).optional(),
      /** How long an edge answer may take before Gearbox upgrades to the cloud (front door). */
      timeout_ms: z.number().int().positive().default(30_000),
      /**
       * Which models edge agents should hold (the control plane pushes them): every entry whose
       * `nodes` list the agent's node (absent → every node) adds its models.
       */
      assignments: z
        .array(
          z.strictObject({
            nodes: z.array(z.string().min(1)).min(1).optional(),
            models: z
              .array(
                z.strictObject({
                  id: z.string().min(1),
                  engine: z.enum(["llamacpp", "ollama", "onnx"]),
                  /** GGUF path, Ollama model name or ONNX directory, as the agent sees it. */
                  source: z.string().min(1),
                  threads: z.number().int().positive().max(256).optional(),
                  context_length: z.number().int().positive().optional(),
                  /** `onnx` only: the tokenizer JSON file that goes with the model. */
                  tokenizer: z.string().min(1).optional(),
                }),
              )
              .min(1),
          }),
        )
        .default([]),
    })
    .prefault({}),
  /** The control plane: where ext_proc replicas and edge agents find it, and its timers. */
  xds: z
    .strictObject({
      /** `host:port` of `gearbox xds` for `gearbox extproc` to follow (env GEARBOX_XDS_ADDRESS); absent → static config. */
      address: z
        .string()
        .regex(/^[^/\s]+:\d{1,5}$/, "must be host:port")
        .optional(),
      /** How often edge agents heartbeat, and how long silence lasts before an agent is expired. */
      heartbeat_interval_ms: z.number().int().positive().default(5_000),
      expiry_ms: z.number().int().positive().default(15_000),
      /**
       * After a (re)start, how long the control plane waits for agents to reconnect before it
       * publishes: subscribers keep what they have meanwhile, so a restart empties no edge set.
       * `gearbox serve` (all-in-one, everything restarts together) does not wait.
       */
      startup_grace_ms: z.number().int().min(0).default(5_000),
    })
    .prefault({})
    .refine((x) => x.expiry_ms > x.heartbeat_interval_ms, { message: "expiry_ms must exceed heartbeat_interval_ms", path: ["expiry_ms"] }),
  /** Tenants defined in the file (read-only over the admin API, which may add more). */
  tenants: z.array(tenantSchema).default([]),
  /** Who may call: keys and workload identities. */
  auth: z
    .strictObject({
      /**
       * Every model call needs a call key (or a bound workload identity). Default: on as soon as
       * tenants exist; off on embedded defaults, where callers are one anonymous tenant.
       */
      required: z.boolean().optional(),
      /** The tenant of unauthenticated callers when keys are not required. */
      anonymous_tenant: z.string().default("default"),
    })
    .prefault({}),
  /** Runaway protection: identical requests of one caller in a short window (`governance/runaway.ts`). */
  runaway: z
    .strictObject({
      enable: z.boolean().default(true),
      window_ms: z.number().int().positive().default(10_000),
      /** Identical requests allowed upstream per window; the rest are replayed or refused (429 `runaway_request_loop`). */
      max_identical: z.number().int().positive().default(10),
      /**
       * Whose identical requests count together: `caller` (the call key, else the workload
       * identity, else the source address, within the tenant) or the whole `tenant`.
       */
      key: z.enum(["caller", "tenant"]).default("caller"),
      /** Answer a repeat past `max_identical` from the answer just given to that caller (or the one in flight) instead of refusing it. */
      replay: z.boolean().default(true),
      /** The replay memo of each process: at most this many answers… */
      replay_max_entries: z.number().int().positive().default(1_000),
      /** …and this many bytes; an answer over a quarter of it is not kept (its repeats are refused). */
      replay_max_bytes: z
        .number()
        .int()
        .positive()
        .default(16 * 1024 * 1024),
    })
    .prefault({}),
  /** Response caching. */
  cache: z
    .strictObject({
      /**
       * The exact cache: an identical chat request (same tenant, model, messages, tools, format
       * and sampling parameters) is answered from a stored completion, without a provider call.
       * Off by default: a cached answer is a behaviour change an operator opts into.
       */
      exact: z
        .strictObject({
          enable: z.boolean().default(false),
          /** How long an answer is served from the cache. */
          ttl_ms: z
            .number()
            .int()
            .positive()
            .default(10 * 60_000),
          /** The in-memory cache's total size (Redis is bounded by its own `maxmemory`). */
          max_bytes: z
            .number()
            .int()
            .positive()
            .default(64 * 1024 * 1024),
          /** Answers larger than this are not stored. */
          max_entry_bytes: z
            .number()
            .int()
            .positive()
            .default(1024 * 1024),
          /**
           * Cache requests whatever their temperature. Off: only requests that ask for a
           * repeatable answer (`temperature: 0`, or a `seed`) are cached.
           */
          any_temperature: z.boolean().default(false),
        })
        .prefault({}),
      /** The semantic cache: a paraphrase of a cached question gets its answer (`semantic-cache.ts`). Off by default. */
      semantic: semanticCacheSchema.prefault({}),
    })
    .prefault({}),
  /**
   * Shadow mode: for matching requests Gearbox computes its whole decision (auth, parse, cache
   * lookup, route, limits) and records it (`shadow_*` log fields, `gearbox_shadow_decisions_total`),
   * then lets the request go on exactly as the client sent it. ext_proc only (the front door has
   * no untouched path). Empty lists match every tenant / endpoint.
   */
  shadow: z
    .strictObject({
      enable: z.boolean().default(false),
      /** Tenant ids shadowed (known once the caller is authenticated); empty → all. */
      tenants: z.array(z.string().min(1)).default([]),
      /** Endpoints shadowed: `chat_completions`, `embeddings`, `messages`; empty → all. */
      endpoints: z.array(z.enum(["chat_completions", "embeddings", "messages"])).default([]),
    })
    .prefault({}),
  /** The ext_proc gRPC service (`extproc/grpc/server.ts`). */
  extproc: z
    .strictObject({
      /**
       * A `Process` stream with no message from Envoy and no answer from Gearbox for this long is
       * released (gRPC DEADLINE_EXCEEDED, request recorded as 504 `extproc_stream_idle`). Above the
       * shipped Envoy configs' `stream_idle_timeout` (300 s), which ends a live request's stream
       * first: this only frees streams Envoy forgot.
       */
      stream_idle_ms: z.number().int().min(100).default(600_000),
      /**
       * Take the caller's workload identity from the `x-forwarded-client-cert` gRPC metadata when
       * Envoy sends no `connection.uri_san_peer_certificate` (an Istio sidecar: the app's hop to it
       * is plaintext). Only where the ext_proc port accepts mTLS alone (STRICT PeerAuthentication):
       * Istio's inbound sidecar then appends the calling sidecar's SPIFFE ID; any other client
       * could write the header itself. See `extproc/governance/xfcc.ts`.
       */
      trust_xfcc: z.boolean().default(false),
    })
    .prefault({}),
  limits: z
    .strictObject({
      /** Largest request body accepted (Envoy's buffer limit should be at least this). */
      max_request_bytes: z
        .number()
        .int()
        .positive()
        .default(8 * 1024 * 1024),
    })
    .prefault({}),
  /**
   * Shared state (Redis, with `REDIS_URL`) failing or slow: tenants and keys are served from each
   * replica's last good values, caches miss, limits are enforced per replica (`store/last-good.ts`).
   */
  shared_state: z
    .strictObject({
      /** How long a key lookup and the tenant listing are reused before Redis is read again (a key revoked on another replica stops working within it). */
      refresh_ms: z.number().int().positive().max(60_000).default(5_000),
      /** How long a request waits on a Redis read before the last good value answers instead. */
      read_timeout_ms: z.number().int().positive().max(10_000).default(100),
      /**
       * The oldest last good value (a key, the tenants) served while Redis fails; past it a call
       * needing it is refused with 503 `auth_unavailable`. A key revoked on Redis during an outage
       * keeps working on a replica that cannot reach Redis for at most this long.
       */
      max_stale_ms: z
        .number()
        .int()
        .positive()
        .default(10 * 60_000),
      /** While Redis fails, how often each store tries it again. */
      probe_interval_ms: z.number().int().positive().max(60_000).default(1_000),
    })
    .prefault({}),
  logging: z.strictObject({ level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info") }).prefault({}),
  /** Traces (OpenTelemetry, OTLP gRPC): see `common/telemetry/tracing.ts`. */
  telemetry: z.strictObject({ tracing: tracingSchema.prefault({}) }).prefault({}),
  /** Provider failover: retries, retry budget, circuit breakers, fallback chains (`extproc/resilience/`). */
  resilience: resilienceSchema.prefault({}),
  /** Conversations kept by the gateway: history, summaries when the route switches (`extproc/conversation/`). */
  conversations: conversationsSchema.prefault({}),
  /** Device SDKs: their control channel, decisions and offline behaviour (`extproc/devices/`). */
  devices: devicesSchema.prefault({}),
  /** What must not leave: detection, then block, edge only, redact or allow per category (`extproc/boundary/`). */
  data_boundary: dataBoundarySchema.prefault({}),
});

export type RawConfig = z.infer<typeof configSchema>;
export type RouteConfig = z.infer<typeof routeSchema>;
export type SemanticCacheConfig = z.infer<typeof semanticCacheSchema>;
