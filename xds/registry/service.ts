/**
 * `gearbox.v1.EdgeRegistryService/Connect` over an `EdgeRegistry`: one stream per agent. The
 * first message must be a valid hello (else INVALID_ARGUMENT naming what is wrong, and the
 * stream ends; the server and every other stream carry on); the registry then welcomes the agent
 * and sends its assignment unless the agent already holds it. Heartbeats update the agent's load
 * and models; ACK / NACK answer the last assignment by nonce. When the stream ends for any reason
 * the agent is removed at once (see `registry.ts`).
 *
 * Statuses the control plane ends a stream with: INVALID_ARGUMENT (protocol error), ABORTED (the
 * same agent id connected again), DEADLINE_EXCEEDED (no heartbeat within the expiry),
 * UNAVAILABLE (shutting down). Agents reconnect with backoff on all of them.
 */
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../../extproc/telemetry/logger.ts";
import { edgeRegistryService } from "../protos.ts";
import { parseHeartbeatModels, parseHello } from "./hello.ts";
import type { AgentSession, EdgeRegistry, EndReason, SessionLink } from "./registry.ts";
import type { ConnectRequest, ConnectResponse } from "./wire.ts";

type ConnectCall = grpc.ServerDuplexStream<ConnectRequest, ConnectResponse>;

const END_STATUS: Record<EndReason, grpc.status> = {
  replaced: grpc.status.ABORTED,
  expired: grpc.status.DEADLINE_EXCEEDED,
  closed: grpc.status.UNAVAILABLE,
};

/** Adds the edge-registry service to a gRPC server (beside ADS, on the control plane's port). */
export function addEdgeRegistryService(server: grpc.Server, registry: EdgeRegistry, logger: Logger): void {
  server.addService(edgeRegistryService().service, {
    Connect: (call: ConnectCall) => serveConnect(call, registry, logger),
  });
}

function serveConnect(call: ConnectCall, registry: EdgeRegistry, logger: Logger): void {
  const peer = call.getPeer();
  let session: AgentSession | undefined;
  let finished = false;

  /** Ends the stream with a status (once) and removes the session if it is still current. */
  const finish = (code: grpc.status, details: string): void => {
    if (finished) return;
    finished = true;
    session?.end();
    call.emit("error", { code, details, metadata: new grpc.Metadata() });
  };
  const refuse = (details: string): void => {
    logger.warn({ peer, agent_id: session?.agentId, details }, "edge registry stream refused");
    finish(grpc.status.INVALID_ARGUMENT, details);
  };
  const link: SessionLink = {
    send: (message) => {
      if (!finished) call.write(message);
    },
    end: (reason, details) => {
      logger.info({ peer, agent_id: session?.agentId, session_id: session?.id, reason }, details);
      finish(END_STATUS[reason], details);
    },
  };
  /** The agent went away or the transport failed: forget the session, log it once. */
  const gone = (how: string): void => {
    if (finished) return;
    finished = true;
    if (session) logger.info({ peer, agent_id: session.agentId, session_id: session.id, how }, "edge agent disconnected");
    session?.end();
  };

  const hello = (request: ConnectRequest): void => {
    if (request.kind !== "hello") return refuse(`EdgeRegistryService/Connect: the first message must be hello, got ${request.kind ?? "an empty message"}`);
    const parsed = parseHello(request.hello);
    if (!parsed.ok) return refuse(`invalid hello: ${parsed.errors.join("; ")}`);
    const value = parsed.value;
    session = registry.connect(value, link);
    if (!finished) logger.info({ peer, agent_id: value.agentId, node: value.node, address: value.address, session_id: session.id, acked_version: value.ackedVersion || undefined }, "edge agent connected");
  };

  call.on("data", (request: ConnectRequest) => {
    if (finished) return;
    if (!session) return hello(request);
    switch (request.kind) {
      case "heartbeat": {
        const models = parseHeartbeatModels(request.heartbeat?.models);
        if (!models.ok) return refuse(`invalid heartbeat: ${models.errors.join("; ")}`);
        return session.heartbeat({ inFlight: request.heartbeat?.in_flight ?? 0, queued: request.heartbeat?.queued ?? 0 }, models.value);
      }
      case "ack": {
        const outcome = session.answer(request.ack ?? {});
        const fields = { agent_id: session.agentId, session_id: session.id, version: request.ack?.version, nonce: request.ack?.nonce };
        if (outcome.kind === "nacked") logger.warn({ ...fields, error: outcome.error }, "edge agent refused its assignment (NACK)");
        else if (outcome.kind === "acked") logger.info(fields, "edge agent applied its assignment (ACK)");
        else logger.debug(fields, "stale ack ignored");
        return;
      }
      case "hello":
        return refuse(`hello sent twice on one stream (session ${session.id})`);
      case undefined:
        return refuse("a ConnectRequest without hello, heartbeat or ack");
      default:
        return request.kind satisfies never;
    }
  });
  call.on("end", () => {
    if (finished) return;
    gone("closed by the agent");
    call.end();
  });
  call.on("cancelled", () => gone("cancelled"));
  call.on("error", (err) => gone(`stream error: ${err.message}`));
}
