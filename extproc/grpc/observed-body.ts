/**
 * Envoy's observability mode (`observability_mode: true`) is send-and-go and streams bodies only
 * (STREAMED: one message per frame; "only STREAMED body processing mode is supported" in
 * `ext_proc.proto`). The processor decides on a whole request body, so the frames of an observed
 * request body are gathered here until `end_of_stream` and handed on as one message. Past the
 * request size limit the rest is not kept: the processor sees a body over the limit (a 413).
 */
import type { ProcessingRequest__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";

export class ObservedRequestBody {
  private parts: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly limitBytes: number) {}

  /** The message to process now, or `undefined` while an observed request body is incomplete. */
  take(message: ProcessingRequest__Output): ProcessingRequest__Output | undefined {
    if (message.request !== "request_body" || !message.observability_mode) return message;
    const body = message.request_body?.body ?? Buffer.alloc(0);
    if (this.bytes <= this.limitBytes) {
      const room = this.limitBytes + 1 - this.bytes;
      this.parts.push(body.length > room ? body.subarray(0, room) : body);
    }
    this.bytes += body.length;
    if (!message.request_body?.end_of_stream) return undefined;
    const whole = Buffer.concat(this.parts);
    this.parts = [];
    return { ...message, request_body: { ...message.request_body, body: whole, end_of_stream: true } };
  }
}
