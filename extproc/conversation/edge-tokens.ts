/**
 * Token counts for edge models from the edge agent's own tokenizer (`POST /v1/tokenize`, the
 * model's llama.cpp tokenizer), not a cloud encoding's. Never a round trip on the request's path:
 * a text not counted yet is counted with `o200k_base` as a stand-in for this request and queued;
 * the queue goes to the agent in one batch beside the request, and from then on the text's
 * count is the agent's. A failing agent leaves the stand-in in use (asked again after a pause).
 */
import type { Message } from "../../common/canonical/types.ts";
import type { EdgeDirectory } from "../edge/agents.ts";
import { readAll, sendUpstream } from "../http/upstream-client.ts";
import { CountCache, messageText, tokenCounterFor, type TokenCounter } from "./tokens.ts";

export interface EdgeTokenOptions {
  agents: () => EdgeDirectory | undefined;
  timeoutMs?: number;
  /** After a failed call, no call for this long. */
  pauseMs?: number;
}

const BATCH = 512;
const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

class EdgeModelCounts {
  readonly known = new CountCache();
  private readonly byMessage = new WeakMap<Message, number>();
  private readonly memos = new WeakMap<object, number>();
  /** Texts counted by the stand-in so far (a memo made while it grew is provisional). */
  private standIns = 0;
  private readonly pending = new Set<string>();
  private flushing: Promise<void> | undefined;
  private pausedUntil = 0;
  private readonly standIn = tokenCounterFor("o200k");

  constructor(
    private readonly model: string,
    private readonly options: EdgeTokenOptions,
  ) {}

  readonly counter: TokenCounter = {
    text: (t) => this.text(t).count,
    messages: (messages) => messages.reduce((sum, m) => sum + PER_MESSAGE + this.message(m), messages.length > 0 ? REPLY_PRIMING : 0),
    memo: (key, count) => {
      const known = this.memos.get(key);
      if (known !== undefined) return known;
      const before = this.standIns;
      const n = count();
      if (this.standIns === before) this.memos.set(key, n);
      return n;
    },
  };

  /** Resolves when the queued texts were sent (or failed). */
  settled(): Promise<void> {
    return this.flushing ?? Promise.resolve();
  }

  private text(t: string): { count: number; real: boolean } {
    if (t === "") return { count: 0, real: true };
    const known = this.known.get(t);
    if (known !== undefined) return { count: known, real: true };
    this.queue(t);
    this.standIns++;
    return { count: this.standIn.text(t), real: false };
  }

  private message(m: Message): number {
    const cached = this.byMessage.get(m);
    if (cached !== undefined) return cached;
    const { count, real } = this.text(messageText(m));
    if (real) this.byMessage.set(m, count);
    return count;
  }

  private queue(t: string): void {
    if (Date.now() < this.pausedUntil || this.pending.size >= BATCH * 4) return;
    this.pending.add(t);
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.size > 0) {
        const texts = [...this.pending].slice(0, BATCH);
        for (const t of texts) this.pending.delete(t);
        const counts = await this.ask(texts);
        if (!counts) {
          this.pending.clear();
          this.pausedUntil = Date.now() + (this.options.pauseMs ?? 10_000);
          return;
        }
        texts.forEach((t, i) => this.known.set(t, counts[i] as number));
      }
    } finally {
      this.flushing = undefined;
    }
  }

  private async ask(texts: string[]): Promise<number[] | undefined> {
    const agent = this.options.agents()?.pick(this.model);
    if (!agent) return undefined;
    const body = Buffer.from(JSON.stringify({ model: this.model, texts }));
    try {
      const res = await sendUpstream(
        new URL(`http://${agent.address}/v1/tokenize`),
        { "content-type": "application/json", "content-length": String(body.length) },
        body,
        AbortSignal.timeout(this.options.timeoutMs ?? 2_000),
      );
      const bytes = await readAll(res);
      if (res.statusCode !== 200) return undefined;
      const counts = (JSON.parse(bytes.toString("utf8")) as { counts?: unknown }).counts;
      return Array.isArray(counts) && counts.length === texts.length && counts.every((n) => Number.isInteger(n) && (n as number) >= 0)
        ? (counts as number[])
        : undefined;
    } catch {
      return undefined;
    }
  }
}

/** The edge agents' token counts, one cache per edge model. */
export class EdgeTokenCounts {
  private readonly models = new Map<string, EdgeModelCounts>();

  constructor(private readonly options: EdgeTokenOptions) {}

  counterFor(model: string): TokenCounter {
    return this.entry(model).counter;
  }

  /** Resolves when the texts queued for `model` were counted by its agent (or the call failed). */
  settled(model: string): Promise<void> {
    return this.entry(model).settled();
  }

  private entry(model: string): EdgeModelCounts {
    let entry = this.models.get(model);
    if (!entry) this.models.set(model, (entry = new EdgeModelCounts(model, this.options)));
    return entry;
  }
}
