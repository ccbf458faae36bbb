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
import type { Logger } from "../../common/telemetry/logger.ts";
import { edgeRegistryService } from "../../common/control-plane/protos.ts";
import { parseHeartbeatModels, parseHello } from "../../common/registry/hello.ts";
import type { AgentSession, EdgeRegistry, EndReason, SessionLink } from "./registry.ts";
import type { ConnectRequest, ConnectResponse } from "../../common/registry/wire.ts";
import type { Tracer } from "@opentelemetry/api";
import { recordSpan } from "../tracing.ts";

type ConnectCall = grpc.ServerDuplexStream<ConnectRequest, ConnectResponse>;

const END_STATUS: Record<EndReason, grpc.status> = {
  replaced: grpc.status.ABORTED,
  expired: grpc.status.DEADLINE_EXCEEDED,
  closed: grpc.status.UNAVAILABLE,
};

/** Adds the edge-registry service to a gRPC server (beside ADS, on the control plane's port). */
export function addEdgeRegistryService(server: grpc.Server, registry: EdgeRegistry, logger: Logger, tracer?: Tracer): void {
  server.addService(edgeRegistryService().service, {
    Connect: (call: ConnectCall) => serveConnect(call, registry, logger, tracer),
  });
}

function serveConnect(call: ConnectCall, registry: EdgeRegistry, logger: Logger, tracer?: Tracer): void {
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
    recordSpan(
      tracer,
      "gearbox.edge_registry.refuse",
      "server",
      () => ({ "gearbox.edge.peer": peer, "gearbox.edge.agent_id": session?.agentId ?? "" }),
      details,
    );
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
    const registered = session;
    recordSpan(tracer, "gearbox.edge_registry.register", "server", () => ({
      "gearbox.edge.agent_id": value.agentId,
      "gearbox.edge.node": value.node,
      "gearbox.edge.agent": value.address,
      "gearbox.edge.session": registered.id,
      "gearbox.edge.acked_version": value.ackedVersion,
    }));
    if (!finished)
      logger.info(
        { peer, agent_id: value.agentId, node: value.node, address: value.address, session_id: session.id, acked_version: value.ackedVersion || undefined },
        "edge agent connected",
      );
  };

  call.on("data", (request: ConnectRequest) => {
    if (finished) return;
    if (!session) return hello(request);
    switch (request.kind) {
      case "heartbeat": {
        const models = parseHeartbeatModels(request.heartbeat?.models);
        if (!models.ok) return refuse(`invalid heartbeat: ${models.errors.join("; ")}`);
        const current = session;
        recordSpan(tracer, "gearbox.edge_registry.report", "server", () => ({
          "gearbox.edge.agent_id": current.agentId,
          "gearbox.edge.in_flight": request.heartbeat?.in_flight ?? 0,
          "gearbox.edge.queued": request.heartbeat?.queued ?? 0,
          "gearbox.edge.models": models.value.length,
        }));
        return session.heartbeat({ inFlight: request.heartbeat?.in_flight ?? 0, queued: request.heartbeat?.queued ?? 0 }, models.value);
      }
      case "ack": {
        const outcome = session.answer(request.ack ?? {});
        const fields = { agent_id: session.agentId, session_id: session.id, version: request.ack?.version, nonce: request.ack?.nonce };
        recordSpan(
          tracer,
          "gearbox.edge_registry.ack",
          "server",
          () => ({ "gearbox.edge.agent_id": fields.agent_id, "gearbox.edge.assignment_version": fields.version ?? "", "gearbox.edge.ack": outcome.kind }),
          outcome.kind === "nacked" ? outcome.error : undefined,
        );
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
