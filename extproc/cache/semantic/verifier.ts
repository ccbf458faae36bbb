/**
 * Optional verification by the edge model: before a semantic hit is reused, an edge agent is asked
 * whether the two questions ask for the same answer — one greedy token (`max_tokens: 1`,
 * `temperature: 0`) with its logprob. Only "yes" with probability ≥ `minConfidence` verifies; a
 * "no", any other token, a low probability, an error status, a timeout (default 300 ms) or no
 * agent serving the model do not (the cache then answers a miss). Never throws.
 */
import { readAll, sendUpstream } from "../../http/upstream-client.ts";
import type { EdgeDirectory } from "../../edge/agents.ts";

export type VerifyResult =
  { kind: "same"; confidence: number } | { kind: "different"; answer: string; confidence: number } | { kind: "failed"; reason: string };

/** Asks whether a cached question's answer fits a new question. */
export interface Verifier {
  verify(question: string, cached: string, signal?: AbortSignal): Promise<VerifyResult>;
}

export interface EdgeVerifierOptions {
  /** The agent to ask: an `EdgeDirectory` (picked per call by `model`), or a fixed `host:port` source. */
  address: EdgeDirectory | (() => string | undefined);
  model: string;
  timeoutMs: number;
  /** The least probability of "yes" that verifies. */
  minConfidence: number;
  /** The caller's node, to prefer an agent on it. */
  callerNode?: string;
}

/** Questions are cut to this many characters each: the check must stay one short prompt. */
const MAX_CHARS = 600;

const SYSTEM = "You compare two user questions. Answer with one word: yes if one answer fits both questions exactly, no otherwise.";

/** The chat request the edge agent gets (OpenAI schema): greedy, one token, its logprob. */
export function verificationRequest(question: string, cached: string, model: string): Record<string, unknown> {
  const cut = (t: string) => (t.length > MAX_CHARS ? `${t.slice(0, MAX_CHARS)}…` : t);
  return {
    model,
    messages: [
      { role: "system", content: SYSTEM },
      { role: "user", content: `Question A: ${cut(cached)}\nQuestion B: ${cut(question)}\nDo these two questions ask for the same answer? Answer yes or no.` },
    ],
    max_tokens: 1,
    temperature: 0,
    logprobs: true,
    top_logprobs: 5,
  };
}

interface Completion {
  choices?: {
    message?: { content?: unknown };
    logprobs?: { content?: { token?: unknown; logprob?: unknown; top_logprobs?: { token?: unknown; logprob?: unknown }[] }[] } | null;
  }[];
}

const YES = /^\s*(?:yes\b|是|对|相同)/i;
const NO = /^\s*(?:no\b|否|不)/i;

/**
 * The verdict in a completion: the first token's text decides yes / no; its probability is the
 * summed probability of the "yes" tokens among its top logprobs (or the token's own, or the
 * agent's confidence header when the body has no logprobs).
 */
export function readVerdict(body: unknown, headerConfidence: number | undefined): VerifyResult {
  const choice = (body as Completion).choices?.[0];
  const content = choice?.message?.content;
  const answer = typeof content === "string" ? content.trim() : "";
  const first = choice?.logprobs?.content?.[0];
  let yesProbability: number | undefined;
  if (first && Array.isArray(first.top_logprobs) && first.top_logprobs.length > 0) {
    yesProbability = 0;
    for (const t of first.top_logprobs)
      if (typeof t.token === "string" && typeof t.logprob === "number" && YES.test(t.token)) yesProbability += Math.exp(t.logprob);
  } else if (first && typeof first.logprob === "number" && typeof first.token === "string") {
    yesProbability = YES.test(first.token) ? Math.exp(first.logprob) : 1 - Math.exp(first.logprob);
  }
  if (YES.test(answer)) {
    const confidence = yesProbability ?? headerConfidence;
    return confidence === undefined ? { kind: "failed", reason: "unscored" } : { kind: "same", confidence: Math.min(1, confidence) };
  }
  if (NO.test(answer)) return { kind: "different", answer: "no", confidence: yesProbability === undefined ? (headerConfidence ?? 0) : 1 - yesProbability };
  return { kind: "failed", reason: `no_verdict:${JSON.stringify(answer.slice(0, 20))}` };
}

export class EdgeVerifier implements Verifier {
  constructor(private readonly o: EdgeVerifierOptions) {}

  async verify(question: string, cached: string, signal?: AbortSignal): Promise<VerifyResult> {
    const address = typeof this.o.address === "function" ? this.o.address() : this.o.address.pick(this.o.model, this.o.callerNode)?.address;
    if (address === undefined) return { kind: "failed", reason: "no_agent" };
    const body = Buffer.from(JSON.stringify(verificationRequest(question, cached, this.o.model)));
    const timeout = AbortSignal.timeout(this.o.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const res = await sendUpstream(
        new URL(`http://${address}/v1/chat/completions`),
        { "content-type": "application/json", "accept-encoding": "identity" },
        body,
        combined,
      );
      const bytes = await readAll(res);
      if (res.statusCode !== 200) return { kind: "failed", reason: `edge_status:${res.statusCode ?? 0}` };
      const header = Number(res.headers["x-gearbox-confidence"]);
      const verdict = readVerdict(JSON.parse(bytes.toString("utf8")), Number.isFinite(header) ? header : undefined);
      if (verdict.kind === "same" && verdict.confidence < this.o.minConfidence) return { kind: "different", answer: "yes", confidence: verdict.confidence };
      return verdict;
    } catch (err) {
      if (timeout.aborted) return { kind: "failed", reason: "timeout" };
      return { kind: "failed", reason: `error:${err instanceof Error ? err.message.slice(0, 60) : String(err)}` };
    }
  }
}
