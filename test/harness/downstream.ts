/**
 * The downstream side of one HTTP stream (Envoy's connection manager encoder): writes the final
 * response, sends local replies, and resets the stream when a failure comes after the response
 * has started ("If a response has already started … this will either ship the reply directly to
 * the downstream codec, or reset the stream").
 */
import type { ServerResponse } from "node:http";
import { AbortedError } from "./body.ts";
import type { LocalReply } from "./filter-core.ts";
import { HeaderMap } from "./headers.ts";
import type { EnvoyStats } from "./stats.ts";

/** Writes one response downstream; its signal aborts everything else of the exchange. */
export class Downstream {
  private readonly controller = new AbortController();
  private started = false;
  /** A local reply was sent or the stream was reset. */
  private finished = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly stats: EnvoyStats,
  ) {
    // The client went away before the response was complete: reset upstream and side stream.
    res.on("close", () => {
      if (!res.writableFinished) this.controller.abort();
    });
  }

  /** Aborted by a local reply, a reset or the client going away. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Response headers have been written downstream. */
  get responseStarted(): boolean {
    return this.started;
  }

  /**
   * Envoy `sendLocalReply` (`Http::Utility::sendLocalReply`): `:status`, then content-length and
   * `content-type: text/plain` for a non-empty body, then the caller's header changes.
   */
  localReply(reply: LocalReply): void {
    if (this.finished || this.controller.signal.aborted) return;
    this.stats.localReplies.push({ status: reply.status, details: reply.details });
    if (this.started) {
      this.reset();
      return;
    }
    this.finished = true;
    this.controller.abort();
    const headers = HeaderMap.of([[":status", String(reply.status)]]);
    headers.add("content-length", String(reply.body.length));
    if (reply.body.length > 0) headers.add("content-type", "text/plain");
    reply.mutateHeaders?.(headers);
    this.writeHead(headers);
    this.res.end(reply.body);
  }

  /** Resets the downstream stream (HTTP/1: closes the connection mid-response). */
  reset(): void {
    if (this.finished || this.res.destroyed) return;
    this.finished = true;
    this.controller.abort();
    this.stats.downstreamResets += 1;
    this.res.destroy();
  }

  /** Writes the response headers (`:status` and the rest). */
  writeHeaders(headers: HeaderMap): void {
    if (this.controller.signal.aborted) throw new AbortedError();
    this.writeHead(headers);
    this.res.flushHeaders();
  }

  /** Streams the response body and ends the response. */
  async writeBody(body: AsyncIterable<Buffer> | Iterable<Buffer>): Promise<void> {
    for await (const chunk of body) {
      if (this.controller.signal.aborted) throw new AbortedError();
      if (!this.res.write(chunk)) await this.drained();
    }
    if (this.controller.signal.aborted) throw new AbortedError();
    this.res.end();
  }

  private writeHead(headers: HeaderMap): void {
    this.started = true;
    const outgoing = headers.toOutgoing();
    // The connection manager sets `server` on every response (server_header_transformation OVERWRITE).
    outgoing.server = "envoy";
    this.res.writeHead(Number(headers.get(":status") ?? 200), outgoing);
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.res.off("drain", done);
        this.res.off("close", done);
        resolve();
      };
      this.res.on("drain", done);
      this.res.on("close", done);
    });
  }
}
