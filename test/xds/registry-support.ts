/**
 * Test and bench support for the edge registry: a control-plane gRPC server carrying only the
 * registry service, raw registry streams (a test playing the agent message by message), an
 * edge-agent `ModelRegistry` over the real llama.cpp engine that counts loads, and a poll.
 */
import * as grpc from "@grpc/grpc-js";
import type { Engine } from "../../edge-agent/engines/engine.ts";
import type { TinyFixture } from "../../edge-agent/engines/llamacpp-test-support.ts";
import { createOllamaEngine } from "../../edge-agent/engines/ollama.ts";
import { createOnnxEngine } from "../../edge-agent/engines/onnx.ts";
import { ModelRegistry } from "../../edge-agent/registry.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import { edgeRegistryService } from "../../common/control-plane/protos.ts";
import type { EdgeRegistry } from "../../xds/registry/registry.ts";
import { addEdgeRegistryService } from "../../xds/registry/service.ts";
import type { ConnectRequest, ConnectResponse } from "../../common/registry/wire.ts";

export interface RegistryServer {
  port: number;
  address: string;
  /** The kind (the `oneof` field set) of every message the server sent, on any stream. */
  sent: string[];
  /** Kills the server at once, as a crashed control plane would (open streams fail). */
  kill(): void;
}

export async function startRegistryServer(registry: EdgeRegistry, logger: Logger, port = 0): Promise<RegistryServer> {
  const sent: string[] = [];
  const recordSent: grpc.ServerInterceptor = (_method, call) =>
    new grpc.ServerInterceptingCall(call, {
      sendMessage: (message: ConnectResponse, next: (m: ConnectResponse) => void) => {
        sent.push(Object.keys(message).join(","));
        next(message);
      },
    });
  const server = new grpc.Server({ interceptors: [recordSent] });
  addEdgeRegistryService(server, registry, logger);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { port: bound, address: `127.0.0.1:${bound}`, sent, kill: () => server.forceShutdown() };
}

type ConnectStream = grpc.ClientDuplexStream<ConnectRequest, ConnectResponse>;
export type RegistryClient = grpc.Client & { Connect(): ConnectStream };

/** A registry client; `ownConnection` gives it its own TCP connection instead of the shared one. */
export function registryClient(address: string, ownConnection = false): RegistryClient {
  const Service = edgeRegistryService();
  return new Service(address, grpc.credentials.createInsecure(), ownConnection ? { "grpc.use_local_subchannel_pool": 1 } : {}) as unknown as RegistryClient;
}

/** One stream driven by hand. */
export interface RawAgent {
  readonly call: ConnectStream;
  readonly responses: ConnectResponse[];
  /** The stream's final status (never rejects). */
  readonly status: Promise<grpc.StatusObject>;
  send(request: ConnectRequest): void;
  /** The `n`-th response (0-based), waiting for it; rejects if the stream ends first. */
  response(n: number): Promise<ConnectResponse>;
}

export function openRaw(client: RegistryClient): RawAgent {
  const call = client.Connect();
  const responses: ConnectResponse[] = [];
  const waiters: (() => void)[] = [];
  let ended: grpc.StatusObject | undefined;
  const wake = () => waiters.splice(0).forEach((w) => w());
  call.on("data", (m: ConnectResponse) => {
    responses.push(m);
    wake();
  });
  call.on("error", () => undefined); // the status carries it
  const status = new Promise<grpc.StatusObject>((resolve) =>
    call.on("status", (s: grpc.StatusObject) => {
      ended = s;
      resolve(s);
      wake();
    }),
  );
  const response = async (n: number): Promise<ConnectResponse> => {
    for (;;) {
      const found = responses[n];
      if (found) return found;
      if (ended) throw new Error(`the stream ended (${grpc.status[ended.code]}: ${ended.details}) before response ${n}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { call, responses, status, send: (r) => call.write(r), response };
}

/** A valid hello for agent `id`. */
export const helloFor = (id: string, extra: Partial<NonNullable<ConnectRequest["hello"]>> = {}): ConnectRequest => ({
  hello: { agent_id: id, node: "node-a", address: "127.0.0.1:8088", capacity: { max_concurrent: 1, max_queue: 4 }, ...extra },
});

/** An edge agent's registry over the fixture's llama.cpp engine, counting every load. */
export function countingRegistry(fixture: TinyFixture): { registry: ModelRegistry; loads: string[] } {
  const loads: string[] = [];
  const counting: Engine = {
    kind: "llamacpp",
    load: (spec) => {
      loads.push(spec.id);
      return fixture.engine.load(spec);
    },
    // The fixture owns the engine and closes it.
    close: () => Promise.resolve(),
  };
  const registry = new ModelRegistry(
    { llamacpp: () => counting, ollama: () => createOllamaEngine(), onnx: () => createOnnxEngine() },
    { maxConcurrent: 1, maxQueue: 4, retryAfterSeconds: 1 },
  );
  return { registry, loads };
}
