/**
 * Zod schema of the `devices:` section: the device SDKs' control channel and decisions
 * (`extproc/devices/`). Merged into the main schema in `config/schema.ts`.
 */
import { z } from "zod";

const ms = z.number().int().positive();

export const devicesSchema = z
  .strictObject({
    /** How often a device heartbeats (told to it in the welcome), and how long silence lasts before it is reclaimed. */
    heartbeat_interval_ms: ms.default(5_000),
    expiry_ms: ms.default(15_000),
    /** A hello (the channel's first message) larger than this is refused with 413. */
    max_hello_bytes: z.number().int().min(256).max(1_048_576).default(16_384),
    /** Connected devices per replica; one more is refused with 503 `too_many_devices`. */
    max_devices: z.number().int().positive().default(100_000),
    /** How long a device decision waits for its outcome; after it, the admission is released and the outcome is refused (404). */
    decision_ttl_ms: ms.default(120_000),
    /** Decisions awaiting an outcome per device; the oldest is dropped past it. */
    max_pending_decisions: z.number().int().positive().default(64),
    /**
     * What a device does while the gateway is unreachable (pushed in its policy): `local` answers
     * on the loaded model (no upgrade, reported when the gateway is back is not attempted);
     * `fail` surfaces the connection error to the app.
     */
    offline: z.enum(["local", "fail"]).default("local"),
  })
  .refine((x) => x.expiry_ms > x.heartbeat_interval_ms, { message: "expiry_ms must exceed heartbeat_interval_ms", path: ["expiry_ms"] });

export type DevicesConfig = z.infer<typeof devicesSchema>;
