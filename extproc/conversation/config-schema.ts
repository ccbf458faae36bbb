/** `conversations:` — the gateway keeps conversation histories (`extproc/conversation/`). */
import { z } from "zod";

export const conversationsSchema = z.strictObject({
  /** On by default: a request with `conversation_id` (body) or `x-gearbox-conversation-id` gets its stored history. */
  enable: z.boolean().default(true),
  /** A conversation is forgotten this long after its last exchange. */
  ttl_ms: z
    .number()
    .int()
    .positive()
    .default(24 * 3_600_000),
  /** In-memory store only: conversations kept at most (least recently written out first). */
  max_conversations: z.number().int().positive().default(10_000),
  /** Stored messages kept before the oldest are folded into the summary (never refused). */
  max_messages: z.number().int().min(8).default(200),
  /** The share of the target's context window the history may fill before it is summarized. */
  history_share: z.number().gt(0).max(1).default(0.5),
  /** Refuse an unknown id with 404 `conversation_not_found` instead of starting a conversation. */
  require_existing: z.boolean().default(false),
  /**
   * When the data boundary (`data_boundary:`) detected values in a request: `false` (the
   * default) stores the exchange with those values replaced by placeholders, never in the clear;
   * `true` stores what the client sent and got.
   */
  keep_originals: z.boolean().default(false),
  /** Per tenant, over the two settings above. */
  tenants: z.record(z.string().min(1), z.strictObject({ require_existing: z.boolean().optional(), keep_originals: z.boolean().optional() })).default({}),
  /**
   * How summaries are written: `extractive` (no model); `edge` (the edge model rewrites the
   * extractive summary beside the request, `edge-summarizer.ts`); `auto` (the default): `edge`
   * when an edge model is configured (`edge_summarizer.model` or `edge.default_model`), else
   * `extractive`. Whatever fails, the extractive summary stands.
   */
  summarizer: z.enum(["auto", "extractive", "edge"]).default("auto"),
  edge_summarizer: z
    .strictObject({
      /** The edge model that summarizes; default `edge.default_model`. */
      model: z.string().min(1).optional(),
      /** The most a summary may take; past it the extractive summary stands. */
      timeout_ms: z.number().int().positive().max(60_000).default(5_000),
      max_tokens: z.number().int().positive().max(4_096).default(256),
    })
    .prefault({}),
  /** Context windows in tokens by model, over the built-in table (`windows.ts`). */
  context_windows: z.record(z.string().min(1), z.number().int().positive()).default({}),
  /** An edge model's context window when neither the table nor the agent says. */
  edge_context_tokens: z.number().int().positive().default(4_096),
});

export type ConversationsConfig = z.infer<typeof conversationsSchema>;
