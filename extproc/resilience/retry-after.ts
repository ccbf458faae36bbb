/**
 * A provider's `retry-after` (RFC 9110 §10.2.3: delay-seconds or an HTTP-date), and the
 * `retry-after-ms` OpenAI and Anthropic also send, as milliseconds to wait.
 */
import type { Headers } from "../processor/outcome.ts";

/** Milliseconds the provider asks to wait; undefined when it says nothing usable. `now`: epoch ms. */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const precise = headers["retry-after-ms"];
  if (precise !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(precise)) return Math.ceil(Number(precise));
  const value = headers["retry-after"]?.trim();
  if (value === undefined || value === "") return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // An HTTP-date has a weekday and a GMT zone; anything else Date.parse takes is not one.
  if (!/GMT$/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
