/**
 * The edge intent layer's call to the agent (see `extproc/routing/intent/edge-classifier.ts` for
 * the prompt and the label reading): one short OpenAI chat request carrying the request id and
 * trace context, bounded by `timeoutMs`, read back as a label, no label, or a failure.
 */
import type { Message } from "../../common/canonical/types.ts";
import { readAll, sendUpstream } from "../http/upstream-client.ts";
import { labellingRequest, parseIntentLabel, type EdgeIntentResult } from "../routing/intent/edge-classifier.ts";

export interface EdgeIntentOptions {
  /** `host:port` of the edge agent. */
  address: string;
  model: string;
  timeoutMs: number;
  requestId?: string;
  /** Extra request headers (trace context). */
  headers?: Record<string, string>;
}

/** Asks the edge agent for the intent of `messages`. Never throws. */
export async function classifyOnEdge(messages: readonly Message[], options: EdgeIntentOptions): Promise<EdgeIntentResult> {
  const body = Buffer.from(JSON.stringify(labellingRequest(messages, options.model)));
  const headers: Record<string, string> = {
    ...options.headers,
    "content-type": "application/json",
    "content-length": String(body.length),
    ...(options.requestId && { "x-request-id": options.requestId }),
  };
  try {
    const res = await sendUpstream(new URL(`http://${options.address}/v1/chat/completions`), headers, body, AbortSignal.timeout(options.timeoutMs));
    const bytes = await readAll(res);
    if (res.statusCode !== 200) return { kind: "failed", reason: `edge_status:${res.statusCode ?? 0}` };
    const completion = JSON.parse(bytes.toString("utf8")) as { choices?: { message?: { content?: unknown } }[] };
    const content = completion.choices?.[0]?.message?.content;
    const answer = typeof content === "string" ? content : "";
    const intent = parseIntentLabel(answer);
    if (intent === undefined) return { kind: "no_label", answer: answer.slice(0, 40) };
    const confidence = Number(res.headers["x-gearbox-confidence"]);
    return { kind: "label", intent, confidence: Number.isFinite(confidence) ? confidence : 0 };
  } catch (err) {
    const name = (err as Error).name;
    return { kind: "failed", reason: name === "TimeoutError" || name === "AbortError" ? "timeout" : `error:${(err as Error).message.slice(0, 60)}` };
  }
}
