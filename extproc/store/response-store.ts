/**
 * Where `POST /v1/responses` keeps finished responses for a later `previous_response_id`: the
 * conversation up to and including the response (input messages and the answer, tool calls
 * included; instructions are not kept, since OpenAI does not carry them over either).
 *
 * Semantics every implementation keeps (the shared suite is `response-store.cases.ts`):
 * - A response is scoped to its tenant: the same id under another tenant is not found.
 * - `put` replaces nothing (ids are fresh); a response lives `ttlMs` after it was stored; past
 *   `maxResponses` (memory) the oldest goes first.
 * - `get` of an unknown or expired id is `undefined`. A store that cannot answer (Redis down)
 *   rejects: the caller decides (the endpoint answers 503 for a `previous_response_id` it
 *   cannot resolve, since an answer without the history would be silently wrong, and skips the
 *   write of a new response).
 */
import type { Message } from "../../common/canonical/types.ts";

export interface StoredResponse {
  /** Every message of the conversation through this response's answer (no system messages). */
  messages: Message[];
}

export interface ResponseStore {
  get(tenant: string, id: string): Promise<StoredResponse | undefined>;
  put(tenant: string, id: string, value: StoredResponse): Promise<void>;
  close(): Promise<void>;
}

export interface ResponseStoreOptions {
  ttlMs: number;
  /** Memory only: the most responses kept. */
  maxResponses?: number;
}

/** Thirty days, as OpenAI keeps stored responses. */
export const DEFAULT_RESPONSE_TTL_MS = 30 * 24 * 3600 * 1000;
export const DEFAULT_MAX_RESPONSES = 10_000;
