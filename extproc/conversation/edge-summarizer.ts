/**
 * The abstractive summarizer: the edge model rewrites the summary (the previous one plus the
 * messages that aged out) through the edge agent's OpenAI-compatible chat endpoint, bounded by a
 * timeout. It runs beside the request, never in front of it: the request that ages messages out
 * is sent with the extractive summary (`extractive.ts`), and the edge's summary, once written,
 * replaces it in the store for the next turns. Any failure — no agent serving the model, a
 * timeout, a non-200, an empty answer — leaves the extractive summary standing.
 */
import type { Message } from "../../common/canonical/types.ts";
import type { EdgeDirectory } from "../edge/agents.ts";
import { readAll, sendUpstream } from "../http/upstream-client.ts";
import { messageText } from "./tokens.ts";

export interface EdgeSummarizerOptions {
  /** The edge agents of the moment (live ones change). */
  agents: () => EdgeDirectory | undefined;
  model: string;
  timeoutMs: number;
  maxTokens: number;
}

export type EdgeSummary = { ok: true; text: string } | { ok: false; reason: string };

const INSTRUCTION =
  "You keep the memory of a conversation. Rewrite the summary so far and the new messages into one short summary. " +
  "Keep every name, number, date, decision and open question exactly as written. Write only the summary.";

export class EdgeSummarizer {
  constructor(private readonly options: EdgeSummarizerOptions) {}

  /** Which summarizer wrote a summary (`ConversationSummary.by`). */
  get by(): string {
    return `edge:${this.options.model}`;
  }

  /** The new summary of `previous` and `aged`. Never throws. */
  async summarize(previous: string | undefined, aged: readonly Message[], requestId?: string): Promise<EdgeSummary> {
    const { model, timeoutMs, maxTokens } = this.options;
    const agent = this.options.agents()?.pick(model);
    if (!agent) return { ok: false, reason: "no_agent" };
    const lines = aged.map((m) => `${m.role}: ${messageText(m)}`).join("\n");
    const prompt = `${previous ? `Summary so far:\n${previous}\n\n` : ""}New messages:\n${lines}`;
    const body = Buffer.from(
      JSON.stringify({
        model,
        messages: [
          { role: "system", content: INSTRUCTION },
          { role: "user", content: prompt },
        ],
        max_tokens: maxTokens,
        temperature: 0,
        stream: false,
      }),
    );
    const headers = { "content-type": "application/json", "content-length": String(body.length), ...(requestId && { "x-request-id": requestId }) };
    try {
      const res = await sendUpstream(new URL(`http://${agent.address}/v1/chat/completions`), headers, body, AbortSignal.timeout(timeoutMs));
      const bytes = await readAll(res);
      if (res.statusCode !== 200) return { ok: false, reason: `edge_status:${res.statusCode ?? 0}` };
      const completion = JSON.parse(bytes.toString("utf8")) as { choices?: { message?: { content?: unknown } }[] };
      const content = completion.choices?.[0]?.message?.content;
      const text = typeof content === "string" ? content.trim() : "";
      return text === "" ? { ok: false, reason: "empty" } : { ok: true, text };
    } catch (err) {
      const name = (err as Error).name;
      return { ok: false, reason: name === "TimeoutError" || name === "AbortError" ? "timeout" : `error:${(err as Error).message.slice(0, 60)}` };
    }
  }
}
