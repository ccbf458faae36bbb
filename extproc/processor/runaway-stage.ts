/**
 * Runaway protection's part in one request (`governance/runaway.ts`): the caller fingerprint the
 * admission counts, the answer recorded when this request is the last one its window admits,
 * and the replay a repeat past the limit gets instead of a refusal (`governance/runaway-replay.ts`).
 *
 * Only a clean 200 answer is recorded — a JSON body, an edge answer, or a stream that ended with
 * no error event — as the bytes the client received, in its own schema. A replay is answered as
 * a cache hit is: `x-gearbox-route: cache`, `x-gearbox-reason: runaway_repeat`, the recorded
 * body and content type, nothing upstream; the request log says `runaway: replayed`.
 */
import type { ParsedCall } from "../endpoints/spec.ts";
import type { ErrorResponse } from "../../common/errors.ts";
import type { Governor, Ticket } from "../governance/governor.ts";
import type { Caller } from "../governance/model.ts";
import { callerFingerprint, runawayScope, type TransportIdentity } from "../governance/runaway.ts";
import type { Recording, ReplayAnswer } from "../governance/runaway-replay.ts";
import { isObject } from "../../common/schemas/fields.ts";
import { SseParser } from "../../common/schemas/sse.ts";
import type { Outcome } from "./outcome.ts";

/** What runaway protection did to a request, for the request log: answered it from the memo, or refused it. */
export type RunawayOutcome = "replayed" | "refused";

export class RunawayStage {
  /** The fingerprint the admission counts (by caller or by tenant: `runaway.key`). */
  readonly fingerprint: string;
  /** The caller's own fingerprint, the key of its replays whatever `runaway.key` says: never another caller's answer. */
  private readonly replayKey: string;
  /** Whose requests repeat, as a refusal names it. */
  readonly who: string;
  outcome: RunawayOutcome | undefined;
  private recording: Recording | undefined;
  /** A stream being recorded: its client-facing bytes so far. */
  private chunks: Buffer[] | undefined;
  private streamBytes = 0;

  constructor(
    private readonly governor: Governor,
    caller: Caller,
    client: TransportIdentity,
    endpoint: string,
    parsed: ParsedCall,
    /** The body as it goes upstream (`governance/runaway.ts`). */
    body: Buffer,
  ) {
    const shape = { endpoint, model: parsed.model, stream: parsed.stream };
    const own = runawayScope("caller", caller, client);
    this.replayKey = callerFingerprint(own, shape, body);
    if ((governor.runaway.key ?? "caller") === "caller") {
      this.who = own.who;
      this.fingerprint = this.replayKey;
    } else {
      const counted = runawayScope("tenant", caller, client);
      this.who = counted.who;
      this.fingerprint = callerFingerprint(counted, shape, body);
    }
  }

  /** Admitted: when no identical request is left to spare in the window, record this answer for the repeats. */
  admitted(ticket: Ticket): void {
    const replays = this.governor.replays;
    if (!replays || ticket.repeatsLeft !== 0) return;
    this.recording?.drop();
    this.recording = replays.expect(this.replayKey);
  }

  /** Refused as a repeat: the answer to give instead (waiting for the recorded one in flight), or undefined → refuse. */
  async replay(requestId: string): Promise<ErrorResponse | undefined> {
    const answer = await this.governor.replays?.answer(this.replayKey);
    this.outcome = answer ? "replayed" : "refused";
    if (!answer) return undefined;
    const sse = answer.contentType.toLowerCase().startsWith("text/event-stream");
    const headers: Record<string, string> = {
      "content-type": answer.contentType,
      "x-gearbox-route": "cache",
      "x-gearbox-reason": "runaway_repeat",
      "x-gearbox-request-id": requestId,
      ...(sse && { "cache-control": "no-cache" }),
    };
    return { status: 200, headers, body: answer.body };
  }

  /** A complete, clean 200 answer (JSON), as the client receives it. */
  answered(contentType: string | undefined, body: Buffer): void {
    this.keep({ contentType: contentType ?? "application/json", body });
  }

  /** The edge cascade's verdict: a 200 it answers with is recorded. */
  edgeAnswered(outcome: Outcome): void {
    const mutation = outcome.kind === "continue" ? outcome.mutation : undefined;
    if (!this.recording || !mutation?.body || mutation.setHeaders?.[":status"] !== "200") return;
    this.answered(mutation.setHeaders["content-type"], mutation.body);
  }

  /** The answer streams (SSE to the client): record it when it is a 200. */
  streamStarted(status: number): void {
    if (this.recording && status === 200) this.chunks = [];
  }

  /** A chunk of the client's stream; at its end, a stream with no error event is kept. */
  streamed(body: Buffer, endOfStream: boolean): void {
    const chunks = this.chunks;
    if (!chunks) return;
    if (body.length > 0) chunks.push(body);
    this.streamBytes += body.length;
    // Longer than any memo could keep: stop copying.
    if (this.streamBytes > 64 * 1024 * 1024) return this.finished(new Error("too long to keep"));
    if (!endOfStream) return;
    this.chunks = undefined;
    const whole = Buffer.concat(chunks);
    if (cleanStream(whole)) this.keep({ contentType: "text/event-stream", body: whole });
    else this.finished(new Error("stream carried an error"));
  }

  /**
   * The request ended. With an error (refused, failed, aborted), or without an answer kept or
   * streaming, the recording is dropped: its waiting repeats are refused.
   */
  finished(error?: unknown): void {
    if (!this.recording || (error === undefined && this.chunks !== undefined)) return;
    this.recording.drop();
    this.recording = undefined;
    this.chunks = undefined;
  }

  private keep(answer: ReplayAnswer): void {
    this.recording?.keep(answer);
    this.recording = undefined;
  }
}

/** True when no event of an SSE stream is an error (OpenAI `data: {"error"…}`, Anthropic and Responses `event: error`, `response.failed`). */
function cleanStream(body: Buffer): boolean {
  const parser = new SseParser();
  const events = [...parser.push(body), ...parser.flush()];
  if (events.length === 0) return false;
  return events.every((e) => {
    if (e.event === "error" || e.event === "response.failed") return false;
    if (!e.data.includes("error")) return true;
    try {
      const data: unknown = JSON.parse(e.data);
      return !(isObject(data) && (data.error !== undefined || data.type === "error" || data.type === "response.failed"));
    } catch {
      return true;
    }
  });
}
