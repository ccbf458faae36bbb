/**
 * The device channel's messages as JSON (`sdk/typescript`, `sdk/python` send them): the hello
 * that opens the channel, heartbeats, acknowledgements, and the outcome of a device decision.
 * Each parse returns a result naming every bad field, never throws.
 *
 * Server → device, as SSE events on the channel (`event: <name>`, `data: <json>`):
 *   welcome  { session, device_id, heartbeat_interval_ms, expiry_ms, policy, resumed }
 *   policy   { version, hash, confidence_threshold, upgrade, offline }
 *   command  { id, op: load|unload|switch, model, engine?, source? }
 *   closed   { reason: replaced|expired|revoked|shutdown }   (then the stream ends)
 */
import { z } from "zod";
import { fail, ok, type Result } from "../../common/result.ts";

/** Printable, no spaces: ids show up in logs, metrics and admin paths. */
const id = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[\x21-\x7e]+$/, "must be printable characters without spaces");

const model = z.strictObject({ id, engine: z.string().min(1).max(32), source: z.string().max(1024).optional() });

export const helloSchema = z.strictObject({
  device_id: id,
  /** Engines the SDK can run (`llama.cpp`, `ollama`). */
  engines: z.array(z.string().min(1).max(32)).max(16).default([]),
  /** Models loaded now. */
  models: z.array(model).max(64).default([]),
  /** The model local answers use now (one of `models`). */
  active: id.optional(),
  capacity: z.strictObject({ max_concurrent: z.number().int().min(1).max(1024) }).prefault({ max_concurrent: 1 }),
  /** The last policy the device applied (a resume); 0 = none. */
  policy: z.strictObject({ version: z.number().int().min(0), hash: z.string().max(128) }).prefault({ version: 0, hash: "" }),
  /** The last command id the device acknowledged (a resume); 0 = none. */
  last_command: z.number().int().min(0).default(0),
  sdk: z.string().max(64).optional(),
});
export type Hello = z.infer<typeof helloSchema>;
export type DeviceModel = z.infer<typeof model>;

export const heartbeatSchema = z.strictObject({
  session: id,
  in_flight: z.number().int().min(0).default(0),
});

export const ackSchema = z.strictObject({
  session: id,
  /** A command id, or absent when acknowledging a policy. */
  command: z.number().int().min(1).optional(),
  policy_version: z.number().int().min(1).optional(),
  ok: z.boolean(),
  error: z.string().max(1024).optional(),
  /** The models loaded and the active one after applying it. */
  models: z.array(model).max(64).optional(),
  active: id.optional(),
});
export type Ack = z.infer<typeof ackSchema>;

export const outcomeSchema = z.strictObject({
  decision_id: id,
  /** The local answer's confidence (geometric mean of token probabilities); null = unscored. */
  confidence: z.number().min(0).max(1).nullable(),
  usage: z.strictObject({ prompt_tokens: z.number().int().min(0), completion_tokens: z.number().int().min(0) }).optional(),
  /** `failed`: the local engine did not answer (the gateway upgrades, as for an edge agent's 5xx). */
  status: z.enum(["ok", "failed"]).default("ok"),
  latency_ms: z.number().min(0).optional(),
});
export type Outcome = z.infer<typeof outcomeSchema>;

/** `schema` applied to `value`: the value, or one message per bad field (`models[0].id: …`). */
export function parseMessage<S extends z.ZodType>(schema: S, value: unknown, what: string): Result<z.output<S>> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return ok(parsed.data);
  return fail(
    ...parsed.error.issues.map((issue) => {
      const path = issue.path.map((k) => (typeof k === "number" ? `[${k}]` : `.${String(k)}`)).join("");
      return `${what}${path}: ${issue.message}`;
    }),
  );
}
