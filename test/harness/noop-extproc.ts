/**
 * A no-op `envoy.service.ext_proc.v3.ExternalProcessor`: answers every message with the empty
 * response of the matching kind (CONTINUE, no mutations), stays silent in observability mode, and
 * closes its side when Envoy half-closes. The baseline for benchmarks and pass-through tests.
 */
import * as grpc from "@grpc/grpc-js";
import { extProcPackage } from "../../common/envoy/protos.ts";
import type { ProcessingRequest__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import type { ProcessingResponse } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingResponse.ts";
import type { RequestKind } from "./stats.ts";

/** A running gRPC server. */
export interface ExtProcServerHandle {
  /** `127.0.0.1:<port>`, for `startEnvoy({ extProc: { address } })`. */
  address: string;
  close(): Promise<void>;
}

/** The empty answer for each message kind, built once. */
const CONTINUE: Record<RequestKind, ProcessingResponse> = {
  request_headers: { request_headers: {} },
  response_headers: { response_headers: {} },
  request_body: { request_body: {} },
  response_body: { response_body: {} },
  request_trailers: { request_trailers: {} },
  response_trailers: { response_trailers: {} },
};

/** Binds a gRPC server on 127.0.0.1:0 with `handlers` for the ExternalProcessor service. */
export async function serveExtProc(handler: grpc.handleBidiStreamingCall<ProcessingRequest__Output, ProcessingResponse>): Promise<ExtProcServerHandle> {
  const server = new grpc.Server({ "grpc.max_receive_message_length": -1, "grpc.max_send_message_length": -1 });
  server.addService(extProcPackage().envoy.service.ext_proc.v3.ExternalProcessor.service, { Process: handler });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) => {
      if (error === null) resolve(bound);
      else reject(error);
    });
  });
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}

/** Starts the no-op processor. */
export function startNoopExtProc(): Promise<ExtProcServerHandle> {
  return serveExtProc((call) => {
    call.on("data", (message: ProcessingRequest__Output) => {
      if (message.observability_mode === true || message.request === undefined) return;
      call.write(CONTINUE[message.request]);
    });
    call.on("end", () => call.end());
    call.on("error", () => undefined);
  });
}
