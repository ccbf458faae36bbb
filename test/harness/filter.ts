/**
 * The ext_proc HTTP filter: what it sends for each direction and how it applies the answers.
 *
 * Copies `Filter::decodeHeaders`/`encodeHeaders`/`onData`/`handleData*Mode` of
 * `source/extensions/filters/http/ext_proc/ext_proc.cc` and `ProcessorState::handleHeadersResponse`
 * / `handleBodyResponse` of `processor_state.cc` (envoyproxy/envoy): headers are held until the
 * processor is done with them (NONE/STREAMED: after the headers call; BUFFERED: after the body
 * call; BUFFERED_PARTIAL: after the partial body call), then forwarded with the body.
 */
import type { BodyMutation__Output } from "../../proto/generated/envoy/service/ext_proc/v3/BodyMutation.ts";
import type { CommonResponse__Output } from "../../proto/generated/envoy/service/ext_proc/v3/CommonResponse.ts";
import type { ProcessingResponse__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingResponse.ts";
import { AbortedError, type BodyChunk, type BodyReader } from "./body.ts";
import { Channel } from "./channel.ts";
import { FilterCore } from "./filter-core.ts";
import { contentLengthOf, type HeaderMap } from "./headers.ts";
import { bodyRequest, headersRequest } from "./messages.ts";
import { applyBodyMutation, mutationBodyLength } from "./mutations.ts";
import type { Outcome, ProcessorState } from "./processor-state.ts";
import type { Direction } from "./stats.ts";

/** Headers and body to pass on: to the router (request) or downstream (response). */
export interface Forward {
  headers: HeaderMap;
  /** No body follows the headers (end_stream with the headers). */
  endOfStream: boolean;
  /** The body, processed; throws `AbortedError` if the exchange is aborted meanwhile. */
  body: AsyncIterable<Buffer> | Iterable<Buffer>;
}

interface StreamedItem {
  bytes: number;
  /** The frame's data, replaced by the processor's answer when it arrives. */
  result: { data: Buffer };
  outcome: Promise<Outcome>;
}

const EMPTY = Buffer.alloc(0);

function headersCommon(state: ProcessorState, r: ProcessingResponse__Output): CommonResponse__Output {
  return (state.direction === "request" ? r.request_headers?.response : r.response_headers?.response) ?? {};
}

function bodyCommon(state: ProcessorState, r: ProcessingResponse__Output): CommonResponse__Output {
  return (state.direction === "request" ? r.request_body?.response : r.response_body?.response) ?? {};
}

/** A body of one frame (none when empty). */
function once(data: Buffer): Buffer[] {
  return data.length > 0 ? [data] : [];
}

async function* concat(first: Buffer, rest: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  if (first.length > 0) yield first;
  yield* rest;
}

/** One ext_proc filter instance: one HTTP request and its response. */
export class ExtProcFilter extends FilterCore {
  /** Whether a body arriving now on `direction` is buffered whole (over the limit → 413/500). */
  buffersWholeBody(direction: Direction): boolean {
    const state = direction === "request" ? this.decoding : this.encoding;
    return !this.complete && !this.env.config.observabilityMode && state.bodyMode === "BUFFERED";
  }

  /** Request path (`decodeHeaders` + `decodeData`); undefined when the exchange was aborted. */
  decode(headers: HeaderMap, body: BodyReader): Promise<Forward | undefined> {
    return this.process(this.decoding, headers, body);
  }

  /** Response path (`encodeHeaders` + `encodeData`); undefined when the exchange was aborted. */
  encode(headers: HeaderMap, body: BodyReader): Promise<Forward | undefined> {
    // "If there is no external processing configured in the encoding path, close the stream."
    if (!this.env.config.observabilityMode && this.encoding.noExternalProcess()) this.closeGracefully();
    return this.process(this.encoding, headers, body);
  }

  private async process(state: ProcessorState, headers: HeaderMap, reader: BodyReader): Promise<Forward | undefined> {
    state.headers = headers;
    state.noBody = reader.noBody;
    if (this.env.config.observabilityMode) return this.observe(state, headers, reader);
    try {
      const result: { replacement?: BodyMutation__Output } = {};
      const headersCall = state.sendHeaders && !this.complete;
      if (headersCall) {
        const pending = this.call(state, state.headersKind, headersRequest(state.direction, headers, reader.noBody), (r) => {
          const common = headersCommon(state, r);
          if (common.status === "CONTINUE_AND_REPLACE") result.replacement = common.body_mutation;
          return this.onHeadersResponse(state, common);
        });
        this.removeContentLength(state, headers);
        if ((await pending) === "abort") return undefined;
      } else {
        this.removeContentLength(state, headers);
      }
      if (result.replacement !== undefined) return this.replaceBody(state, headers, reader, result.replacement);
      return await this.processBody(state, headers, reader, headersCall);
    } catch (error) {
      if (error instanceof AbortedError) return undefined;
      throw error;
    }
  }

  /** decodeHeaders/encodeHeaders: drop content-length when the body mode cannot keep it right. */
  private removeContentLength(state: ProcessorState, headers: HeaderMap): void {
    if (!this.complete && state.shouldRemoveContentLength() && headers.remove("content-length")) {
      this.env.stats.contentLengthRemoved += 1;
    }
  }

  /** `handleHeadersResponse`: mutations, route cache, CONTINUE_AND_REPLACE; false if aborted. */
  private onHeadersResponse(state: ProcessorState, common: CommonResponse__Output): boolean {
    const replacing = common.status === "CONTINUE_AND_REPLACE";
    if (common.header_mutation !== undefined && !this.mutateHeaders(state, common.header_mutation, replacing)) {
      return false;
    }
    this.clearRouteCache(state, common);
    if (replacing) {
      // "Once this message is received, we won't send anything more on this request or response."
      state.bodyMode = "NONE";
      state.sendTrailers = false;
    }
    this.closeIfLastResponse(state.headersKind, false);
    return true;
  }

  /** CONTINUE_AND_REPLACE with a body mutation: the new body replaces whatever comes. */
  private replaceBody(state: ProcessorState, headers: HeaderMap, reader: BodyReader, mutation: BodyMutation__Output): Forward {
    // The processor cannot be trusted to have set content-length for the new body.
    if (headers.remove("content-length")) this.env.stats.contentLengthRemoved += 1;
    const body = applyBodyMutation(reader.takeBuffered()?.data ?? EMPTY, mutation);
    reader.discard();
    return this.release(state, headers, body.length === 0, once(body));
  }

  private async processBody(state: ProcessorState, headers: HeaderMap, reader: BodyReader, afterHeadersCall: boolean): Promise<Forward | undefined> {
    if (this.complete || reader.noBody || state.bodyMode === "NONE") {
      return this.release(state, headers, reader.noBody, reader.rest());
    }
    // "All the body data came in before the header message was complete, and the server wants the
    // body. It doesn't matter whether the processing mode is buffered, streamed, or partially
    // buffered": one BufferedBodyCallback call, with headers still held.
    if (afterHeadersCall && reader.complete) {
      const whole = reader.takeBuffered() ?? { data: EMPTY, endOfStream: true };
      const out = await this.bufferedCall(state, whole.data, whole.endOfStream, true);
      return out === undefined ? undefined : this.releaseWhole(state, headers, out);
    }
    switch (state.bodyMode) {
      case "BUFFERED": {
        const out = await this.bufferedCall(state, await reader.readAll(), true, true);
        return out === undefined ? undefined : this.releaseWhole(state, headers, out);
      }
      case "STREAMED":
        return this.release(state, headers, false, this.streamedBody(state, reader));
      case "BUFFERED_PARTIAL": {
        const partial = await this.collectPartial(reader);
        const out = await this.bufferedCall(state, partial.data, partial.endOfStream, false);
        return out === undefined ? undefined : this.release(state, headers, false, concat(out, reader.rest()));
      }
      default: {
        const unknown: never = state.bodyMode;
        throw new Error(`unknown body mode ${String(unknown)}`);
      }
    }
  }

  /**
   * Releases headers with a body known in full. Envoy trusts a content-length the processor set in
   * a header mutation and forwards it as is; the harness notes when it is wrong.
   */
  private releaseWhole(state: ProcessorState, headers: HeaderMap, body: Buffer): Forward {
    const contentLength = contentLengthOf(headers);
    if (contentLength !== undefined && contentLength !== body.length) {
      const mismatch = { direction: state.direction, contentLength, bodyLength: body.length, rejected: false };
      this.env.stats.contentLengthMismatches.push(mismatch);
    }
    return this.release(state, headers, false, once(body));
  }

  /** The headers leave the filter: later header mutations cannot apply. */
  private release(state: ProcessorState, headers: HeaderMap, endOfStream: boolean, body: Forward["body"]): Forward {
    state.headers = undefined;
    return { headers, endOfStream, body };
  }

  /**
   * One body call whose answer may change the held headers and the whole body (BUFFERED and
   * BUFFERED_PARTIAL). In BUFFERED mode a body mutation must agree with content-length: "If its
   * value doesn't match the length of mutated body, the corresponding body mutation will be
   * rejected and local reply will be sent with an error message."
   */
  private async bufferedCall(state: ProcessorState, data: Buffer, endOfStream: boolean, checkContentLength: boolean): Promise<Buffer | undefined> {
    let out = data;
    const outcome = await this.call(state, state.bodyKind, bodyRequest(state.direction, data, endOfStream), (r) => {
      const common = bodyCommon(state, r);
      if (common.header_mutation !== undefined && !this.mutateHeaders(state, common.header_mutation, false)) {
        return false;
      }
      const mutation = common.body_mutation;
      if (mutation !== undefined) {
        const contentLength = state.headers === undefined ? undefined : contentLengthOf(state.headers);
        const bodyLength = mutationBodyLength(mutation);
        if (checkContentLength && contentLength !== undefined && contentLength !== bodyLength) {
          this.env.stats.contentLengthMismatches.push({ direction: state.direction, contentLength, bodyLength, rejected: true });
          this.errorResponse("mismatch between content length and the length of the mutated body");
          return false;
        }
        out = applyBodyMutation(data, mutation);
      }
      this.clearRouteCache(state, common);
      return true;
    });
    return outcome === "abort" ? undefined : out;
  }

  /** BUFFERED_PARTIAL: queue frames until end_stream or until more than the buffer limit. */
  private async collectPartial(reader: BodyReader): Promise<BodyChunk> {
    const parts: Buffer[] = [];
    let bytes = 0;
    let chunk = reader.takeBuffered() ?? (await reader.next());
    while (chunk !== undefined) {
      parts.push(chunk.data);
      bytes += chunk.data.length;
      if (chunk.endOfStream) return { data: Buffer.concat(parts), endOfStream: true };
      if (bytes > this.env.bufferLimitBytes) break;
      chunk = await reader.next();
    }
    return { data: Buffer.concat(parts), endOfStream: false };
  }

  /**
   * STREAMED: every frame goes to the processor as it arrives (what arrived during the headers call
   * goes as one frame), and each answer replaces its frame, in order. Header mutations in these
   * answers are dropped: "header mutations will only take effect if the current processing mode for
   * the body is BUFFERED".
   */
  private async *streamedBody(state: ProcessorState, reader: BodyReader): AsyncGenerator<Buffer> {
    const inFlight = new Channel<StreamedItem>();
    void this.sendStreamed(state, reader, inFlight);
    for await (const item of inFlight) {
      inFlight.release(item.bytes);
      if ((await item.outcome) === "abort") throw new AbortedError();
      if (item.result.data.length > 0) yield item.result.data;
    }
  }

  private async sendStreamed(state: ProcessorState, reader: BodyReader, inFlight: Channel<StreamedItem>): Promise<void> {
    try {
      let chunk = reader.takeBuffered() ?? (await reader.next());
      while (chunk !== undefined) {
        inFlight.push(this.streamedCall(state, chunk), chunk.data.length);
        if (chunk.endOfStream) break;
        // Watermark: stop reading while more than the buffer limit waits for the processor.
        while (inFlight.bytes > this.env.bufferLimitBytes) await inFlight.taken();
        chunk = await reader.next();
      }
      inFlight.close();
    } catch (error) {
      inFlight.fail(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** One STREAMED frame: the answer replaces (or clears) the frame; header mutations are dropped. */
  private streamedCall(state: ProcessorState, chunk: BodyChunk): StreamedItem {
    const result = { data: chunk.data };
    const request = bodyRequest(state.direction, chunk.data, chunk.endOfStream);
    const outcome = this.call(state, state.bodyKind, request, (r) => {
      const common = bodyCommon(state, r);
      if (common.header_mutation !== undefined) {
        this.ignoreHeaderMutation(state, common.header_mutation, "body-mode-not-buffered");
      }
      if (common.body_mutation !== undefined) result.data = applyBodyMutation(chunk.data, common.body_mutation);
      this.clearRouteCache(state, common);
      if (chunk.endOfStream) this.closeIfLastResponse(state.bodyKind, true);
      return true;
    });
    return { bytes: chunk.data.length, result, outcome };
  }

  /** Observability mode: send and go; only STREAMED bodies are sent, nothing is changed. */
  private observe(state: ProcessorState, headers: HeaderMap, reader: BodyReader): Forward {
    if (state.sendHeaders) this.sendAndGo(state.headersKind, headersRequest(state.direction, headers, reader.noBody));
    const body = state.bodyMode === "STREAMED" ? this.observeBody(state, reader) : reader.rest();
    return this.release(state, headers, reader.noBody, body);
  }

  private async *observeBody(state: ProcessorState, reader: BodyReader): AsyncGenerator<Buffer> {
    for (let chunk = await reader.next(); chunk !== undefined; chunk = await reader.next()) {
      this.sendAndGo(state.bodyKind, bodyRequest(state.direction, chunk.data, chunk.endOfStream));
      if (chunk.data.length > 0) yield chunk.data;
    }
  }
}
