/** `providers:` in `gearbox.yaml`: one upstream provider, over its catalog preset (`catalog.ts`). */
import { z } from "zod";
import { providerTimeoutsSchema } from "../resilience/config-schema.ts";
import { AUTH_SCHEMES, PRESETS, PROVIDER_KINDS } from "./catalog.ts";

/** USD per 1 M tokens. */
const price = z.strictObject({ input: z.number().min(0), output: z.number().min(0), cached_input: z.number().min(0).optional() });

export const providerSchema = z.strictObject({
  /** Also the Envoy cluster name Gearbox routes to (`x-gearbox-upstream`). */
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "must be lower-case letters, digits, '-' or '_'")
    .refine((n) => n !== "edge" && !n.startsWith("gearbox-"), "'edge' and 'gearbox-*' name Gearbox's own clusters"),
  /** A catalog entry (`deepseek`, `dashscope`, `anthropic`…) supplying the fields below. */
  preset: z.enum(Object.keys(PRESETS) as [string, ...string[]]).optional(),
  kind: z.enum(PROVIDER_KINDS).optional(),
  /** Base URL as the provider's SDK takes it, e.g. `https://api.openai.com/v1`. */
  base_url: z.url({ protocol: /^https?$/ }).optional(),
  auth: z.enum(AUTH_SCHEMES).optional(),
  /** Azure OpenAI's `api-version` query parameter. */
  api_version: z.string().min(1).optional(),
  api_key_env: z.string().min(1).optional(),
  api_key_file: z.string().min(1).optional(),
  /**
   * OpenAI's `OpenAI-Organization` and `OpenAI-Project` for Gearbox's key (kind `openai`). A
   * client's own never go upstream: they belong to its key, and beside Gearbox's key OpenAI
   * refuses a mismatched one (401 `mismatched_organization`).
   */
  organization: z.string().min(1).optional(),
  project: z.string().min(1).optional(),
  /** Models this provider serves; a request for one of them goes here. */
  models: z.array(z.string().min(1)).default([]),
  /** Client-facing model names → the provider's model names. */
  aliases: z.record(z.string().min(1), z.string().min(1)).default({}),
  /** USD per 1 M tokens by model, over the preset's list prices. */
  pricing: z.record(z.string().min(1), price).default({}),
  params: z.strictObject({ drop: z.array(z.string()).optional(), rename: z.record(z.string(), z.string()).optional() }).optional(),
  /** Where requests for models no provider lists go. At most one provider sets it. */
  default: z.boolean().default(false),
  /** Upstream timeout for the front door's own calls (ms); `timeouts.total_ms` wins over it. */
  timeout_ms: z.number().int().positive().default(600_000),
  /** Connect, first byte, idle gap and total timeouts of Gearbox's calls to this provider. */
  timeouts: providerTimeoutsSchema.prefault({}),
});

export type ProviderConfig = z.infer<typeof providerSchema>;
