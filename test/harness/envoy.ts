/**
 * An Envoy stand-in for tests: an HTTP/1.1 listener that runs every request through Envoy's
 * connection manager, the ext_proc HTTP filter and the router, talking to a real
 * `envoy.service.ext_proc.v3.ExternalProcessor` over gRPC and to real HTTP upstreams.
 *
 * Each rule cites the Envoy source or proto comment it copies (see the other files of this folder).
 * TLS: terminated per SNI with `downstreamTls`, originated per cluster with `tls` (tls.ts); client
 * certificates are simulated for the request attributes. What it does not do:
 * HTTP/2 downstream, trailers (Envoy's HTTP/1 codec drops them unless `enable_trailers`, so the
 * trailer modes never produce a message), FULL_DUPLEX_STREAMED, per-route filter config, metadata
 * other than ext_proc's dynamic_metadata (route matchers and ORIGINAL_DST `metadata_key` read it),
 * response attributes and most request attributes (see `attributes.ts`).
 */
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { extProcPackage } from "../../common/envoy/protos.ts";
import { serveStream, type StreamEnv } from "./active-stream.ts";
import { resolveEnvoyConfig, type EnvoyOptions } from "./config.ts";
import { MutationChecker } from "./mutations.ts";
import { Router } from "./routing.ts";
import type { StreamRegistry } from "./side-stream.ts";
import { newStats, type EnvoyStats } from "./stats.ts";
import { DownstreamTls, type DownstreamTlsCounters } from "./tls.ts";

export type * from "./config.ts";
export type { EnvoyStats, IgnoredMutation, IgnoreReason, LocalReplyRecord, RequestKind } from "./stats.ts";

/** A running stand-in. */
export interface EnvoyHarness {
  /** `http://127.0.0.1:<port>`, or `https://…` with `downstreamTls`. */
  url: string;
  /** With `downstreamTls`: listener TLS counters. */
  tls: DownstreamTlsCounters | undefined;
  port: number;
  /** Live counters; read them after a request completes. */
  stats: EnvoyStats;
  /** Stops listening, resets open side streams and upstream connections. */
  close(): Promise<void>;
}

/** gRPC channel options: no message size caps below the buffer limits Envoy would apply. */
const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  "grpc.max_send_message_length": -1,
  "grpc.max_receive_message_length": -1,
};

/** Starts the stand-in on 127.0.0.1 and an ephemeral port. */
export async function startEnvoy(options: EnvoyOptions): Promise<EnvoyHarness> {
  const config = resolveEnvoyConfig(options);
  const stats = newStats();
  const ExternalProcessor = extProcPackage().envoy.service.ext_proc.v3.ExternalProcessor;
  const client = new ExternalProcessor(config.extProc.address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  const registry: StreamRegistry = new Set();
  const agent = new http.Agent({ keepAlive: true });
  const env: StreamEnv = {
    config,
    stats,
    router: new Router(config, stats, agent),
    filterEnv: {
      config: config.extProc,
      stats,
      client,
      registry,
      checker: new MutationChecker(config.extProc.mutationRules),
      bufferLimitBytes: config.bufferLimitBytes,
    },
  };
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    void serveStream(env, req, res);
  };
  const downstreamTls = config.downstreamTls === undefined ? undefined : new DownstreamTls(config.downstreamTls);
  const server = downstreamTls === undefined ? http.createServer(handler) : https.createServer(downstreamTls.serverOptions(), handler);
  // A failed handshake (no filter chain for the SNI) closes the connection; nothing to answer.
  server.on("tlsClientError", () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = portOf(server.address());
  return {
    url: `${downstreamTls === undefined ? "http" : "https"}://127.0.0.1:${port}`,
    port,
    stats,
    tls: downstreamTls?.counters,
    close: async () => {
      for (const stream of [...registry]) stream.cancel();
      client.close();
      agent.destroy();
      env.router.close();
      downstreamTls?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The port of a listening TCP server's address. */
function portOf(address: AddressInfo | string | null): number {
  if (address === null || typeof address === "string") throw new Error("server is not listening on TCP");
  return address.port;
}
