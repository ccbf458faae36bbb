/**
 * A message body read from a Node stream the way Envoy's HTTP/1 codec and filter manager see it:
 * data frames with an end_stream flag, buffered up to the connection's buffer limit. Past the
 * limit the source is paused (watermark) unless the filter is buffering the whole body, in which
 * case the limit is fatal (Envoy's 413 / 500 "data too large" local replies).
 */
import type { Readable } from "node:stream";

/** One data frame: its bytes and whether it ends the body (`end_stream`). */
export interface BodyChunk {
  data: Buffer;
  endOfStream: boolean;
}

/** Raised out of body iterables when the HTTP exchange was aborted (local reply or reset). */
export class AbortedError extends Error {
  constructor() {
    super("HTTP exchange aborted");
  }
}

/** Options of `BodyReader`. */
export interface BodyReaderOptions {
  /** end_stream came with the headers: the message has no body. */
  noBody: boolean;
  /** `content-length`, which lets the last data frame carry end_stream (as Envoy's codec does). */
  contentLength: number | undefined;
  limit: number;
  signal: AbortSignal;
  /** Whether going over the limit now is fatal (the filter buffers the whole body). */
  overflowIsFatal: () => boolean;
  onOverflow: () => void;
  /** The source failed or the peer went away mid-body. */
  onSourceError: () => void;
}

/** Reads a body eagerly into a queue; consumers take data frames from it in order. */
export class BodyReader {
  private queue: Buffer[] = [];
  private queued = 0;
  private received = 0;
  private ended: boolean;
  private deliveredEnd: boolean;
  private wake: (() => void) | undefined;
  private discarded = false;
  /** Bytes `readAll` has taken and still holds (they count towards the limit). */
  private retained = 0;

  constructor(
    private readonly source: Readable,
    private readonly options: BodyReaderOptions,
  ) {
    this.ended = options.noBody;
    this.deliveredEnd = options.noBody;
    if (options.noBody) {
      source.resume();
      return;
    }
    source.on("data", (chunk: Buffer) => this.onData(chunk));
    source.on("end", () => {
      this.ended = true;
      this.notify();
    });
    source.on("error", () => this.failSource());
    source.on("aborted", () => this.failSource());
    options.signal.addEventListener("abort", () => this.notify(), { once: true });
  }

  /** No body at all (end_stream with the headers). */
  get noBody(): boolean {
    return this.options.noBody;
  }

  /** Every byte of the body has arrived (Envoy `complete_body_available_`). */
  get complete(): boolean {
    return this.ended || (this.options.contentLength !== undefined && this.received >= this.options.contentLength);
  }

  /** Bytes read but not yet taken. */
  get bufferedBytes(): number {
    return this.queued;
  }

  /** Whether any data (or the end) is waiting to be taken. */
  get hasBufferedData(): boolean {
    return this.queue.length > 0 || (this.complete && !this.deliveredEnd);
  }

  /** Drops the rest of the body (after a local reply). */
  discard(): void {
    this.discarded = true;
    this.queue = [];
    this.queued = 0;
    this.source.resume();
  }

  /**
   * Everything queued so far as one frame, or undefined when nothing is waiting. Envoy hands the
   * data it held while a call was pending to the next stage in one piece.
   */
  takeBuffered(): BodyChunk | undefined {
    if (!this.hasBufferedData) return undefined;
    const data = Buffer.concat(this.queue);
    this.queue = [];
    this.release(data.length);
    const endOfStream = this.complete;
    if (endOfStream) this.deliveredEnd = true;
    return { data, endOfStream };
  }

  /** The next data frame, or undefined after the end_stream frame or on abort. */
  async next(): Promise<BodyChunk | undefined> {
    for (;;) {
      if (this.options.signal.aborted) throw new AbortedError();
      if (this.deliveredEnd) return undefined;
      const head = this.queue.shift();
      if (head !== undefined) {
        this.release(head.length);
        const endOfStream = this.complete && this.queue.length === 0;
        if (endOfStream) this.deliveredEnd = true;
        return { data: head, endOfStream };
      }
      if (this.complete) {
        // A chunked body ends with an empty end_stream frame (Envoy's codec onMessageComplete).
        this.deliveredEnd = true;
        return { data: Buffer.alloc(0), endOfStream: true };
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  /** The whole (remaining) body; everything read so far counts against the limit. */
  async readAll(): Promise<Buffer> {
    const parts: Buffer[] = [];
    this.retained = 0;
    try {
      for (let chunk = await this.next(); chunk !== undefined; chunk = await this.next()) {
        parts.push(chunk.data);
        this.retained += chunk.data.length;
        if (this.retained > this.options.limit && this.options.overflowIsFatal()) this.overflow();
      }
    } finally {
      this.retained = 0;
    }
    return Buffer.concat(parts);
  }

  /** The remaining frames' bytes, unprocessed. */
  async *rest(): AsyncGenerator<Buffer> {
    for (let chunk = await this.next(); chunk !== undefined; chunk = await this.next()) {
      if (chunk.data.length > 0) yield chunk.data;
    }
  }

  private onData(chunk: Buffer): void {
    if (this.discarded) return;
    this.queue.push(chunk);
    this.queued += chunk.length;
    this.received += chunk.length;
    if (this.queued + this.retained > this.options.limit) {
      if (this.options.overflowIsFatal()) {
        this.overflow();
        return;
      }
      this.source.pause();
    }
    this.notify();
  }

  /** Over the limit while the whole body is being buffered: the filter manager's local reply. */
  private overflow(): void {
    this.options.onOverflow();
    this.discard();
    this.notify();
  }

  private release(bytes: number): void {
    this.queued -= bytes;
    if (this.queued < this.options.limit / 2 && this.source.isPaused()) this.source.resume();
  }

  private failSource(): void {
    if (this.complete) return;
    this.options.onSourceError();
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
