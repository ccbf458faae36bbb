/**
 * The edge-agent registry: the live agents, one session each, keyed by agent id. It knows nothing
 * of gRPC: the service (`service.ts`) hands it a validated hello and a `SessionLink` (send a
 * message, end the stream) per stream, and feeds it the heartbeats and acks that arrive.
 *
 * - Sessions: a second connection with an agent id replaces the first, whose stream is ended. A
 *   stream that ends (the agent closed it, cancelled, failed) removes its agent at once: an agent
 *   without a stream is not reachable for assignments, and a reconnect re-adds it.
 * - Expiry: an agent that sends no heartbeat for `expiryMs` is removed and its stream ended (by
 *   `expiryMs` + one interval at the latest). One sweeping timer, every heartbeat interval, serves
 *   the whole registry (unref'd, running only while agents are listed), so a removed agent leaves
 *   nothing behind: no timer, no map entry, no reference to its stream.
 * - Assignments: `assignmentsFor(agent)` says what an agent should hold; the version is a hash of
 *   that content (`assignment.ts`). An agent is sent an assignment when its version differs from
 *   what the agent holds or was last sent on this session, so a hello that reports the current
 *   version (a resume) gets nothing, and a NACKed assignment is not re-sent until it changes.
 *   `undefined` means "no assignment": the agent keeps whatever it loaded by itself.
 * - Acks match the nonce of the last assignment sent on the session; other nonces are stale.
 */
import { randomUUID } from "node:crypto";
import { createLogger, type Logger } from "../../common/telemetry/logger.ts";
import { assignmentVersion, canonicalModels, type ModelSpec } from "./assignment.ts";
import type { AgentCapacity, AgentHello, AgentModel } from "../../common/registry/hello.ts";
import { durationOf, type AckMessage, type ConnectResponse } from "../../common/registry/wire.ts";

export type { ModelSpec };

/** Work in progress on an agent (summed over its models). */
export interface AgentLoad {
  readonly inFlight: number;
  readonly queued: number;
}

/** An assignment the agent refused. */
export interface AgentNack {
  readonly version: string;
  readonly error: string;
  /** `now()` when the NACK arrived. */
  readonly at: number;
}

/** One live agent, as a copy (later changes do not show through it). */
export interface AgentView {
  readonly agentId: string;
  readonly node: string;
  /** `ip:port` of its OpenAI-compatible API. */
  readonly address: string;
  readonly sessionId: string;
  /** Loaded now, sorted by id (from the hello, then each heartbeat). */
  readonly models: readonly AgentModel[];
  readonly capacity: AgentCapacity;
  readonly load: AgentLoad;
  readonly labels: Readonly<Record<string, string>>;
  readonly connectedAt: number;
  readonly lastHeartbeatAt: number;
  /** The version the agent was last sent on this session, or the one its hello reported ("" = none). */
  readonly assignedVersion: string;
  /** The last version the agent acknowledged ("" = none). */
  readonly ackedVersion: string;
  /** The last refusal; cleared by the next ACK. */
  readonly lastNack?: AgentNack;
}

export type RegistryChange =
  /** A new agent, or a new session replacing an agent's previous one. */
  | { kind: "joined"; agent: AgentView }
  /** Load, models, or assignment state changed. */
  | { kind: "updated"; agent: AgentView }
  | { kind: "left"; agent: AgentView; reason: "disconnected" | "expired" };

/** Why the registry ends a stream. */
export type EndReason = "replaced" | "expired" | "closed";

/** The registry's handle on one stream. */
export interface SessionLink {
  send(message: ConnectResponse): void;
  /** Ends the stream; the registry has already forgotten the session. */
  end(reason: EndReason, details: string): void;
}

export type AckOutcome = { kind: "acked"; version: string } | { kind: "nacked"; version: string; error: string } | { kind: "stale" };

/** What the service calls for one stream. Calls on a session that was replaced, expired or ended do nothing. */
export interface AgentSession {
  readonly id: string;
  readonly agentId: string;
  heartbeat(load: AgentLoad, models: readonly AgentModel[]): void;
  answer(ack: AckMessage): AckOutcome;
  /** The stream is gone (closed by the agent, cancelled, failed). */
  end(): void;
}

export interface EdgeRegistryOptions {
  /** How often agents heartbeat. Default 5000. */
  heartbeatIntervalMs?: number;
  /** Silence after which an agent is removed. Default 3 × the interval; must exceed it. */
  expiryMs?: number;
  /** The models an agent should hold; `undefined`: no assignment (the agent keeps what it has). */
  assignmentsFor: (agent: AgentView) => readonly ModelSpec[] | undefined;
  /** Clock in ms. Default `Date.now`. */
  now?: () => number;
  /** Where failures of `assignmentsFor` and of listeners go. Default: an `info` logger. */
  logger?: Logger;
}

export interface RegistryStats {
  agents: number;
  /** Heartbeats handled since the registry started. */
  heartbeats: number;
  /** Whether the sweeping timer is running (only while agents are listed). */
  sweeping: boolean;
}

/** Internal, mutable state of one session. */
interface AgentRecord {
  readonly hello: AgentHello;
  readonly link: SessionLink;
  readonly sessionId: string;
  readonly connectedAt: number;
  lastHeartbeatAt: number;
  models: readonly AgentModel[];
  load: AgentLoad;
  offeredVersion: string;
  ackedVersion: string;
  pending: { version: string; nonce: string } | undefined;
  lastNack: AgentNack | undefined;
}

const IDLE: AgentLoad = Object.freeze({ inFlight: 0, queued: 0 });

function viewOf(r: AgentRecord): AgentView {
  return {
    agentId: r.hello.agentId,
    node: r.hello.node,
    address: r.hello.address,
    sessionId: r.sessionId,
    models: r.models,
    capacity: r.hello.capacity,
    load: r.load,
    labels: r.hello.labels,
    connectedAt: r.connectedAt,
    lastHeartbeatAt: r.lastHeartbeatAt,
    assignedVersion: r.offeredVersion,
    ackedVersion: r.ackedVersion,
    ...(r.lastNack ? { lastNack: r.lastNack } : {}),
  };
}

function sameModels(a: readonly AgentModel[], b: readonly AgentModel[]): boolean {
  return a.length === b.length && a.every((m, i) => m.id === b[i]?.id && m.engine === b[i]?.engine);
}

export class EdgeRegistry {
  private readonly records = new Map<string, AgentRecord>();
  private readonly listeners = new Set<(change: RegistryChange) => void>();
  private readonly heartbeatIntervalMs: number;
  private readonly expiryMs: number;
  private readonly now: () => number;
  private readonly logger: Logger;
  private sweeper: NodeJS.Timeout | undefined;
  private nonces = 0;
  private heartbeats = 0;
  private closed = false;

  constructor(private readonly options: EdgeRegistryOptions) {
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 5000;
    this.expiryMs = options.expiryMs ?? 3 * this.heartbeatIntervalMs;
    if (!(this.heartbeatIntervalMs > 0)) throw new RangeError(`heartbeatIntervalMs must be positive, got ${this.heartbeatIntervalMs}`);
    if (!(this.expiryMs > this.heartbeatIntervalMs))
      throw new RangeError(`expiryMs (${this.expiryMs}) must exceed heartbeatIntervalMs (${this.heartbeatIntervalMs})`);
    this.now = options.now ?? Date.now;
    this.logger = options.logger ?? createLogger("info", "edge-registry");
  }

  /** Registers a stream's agent (replacing its previous session), welcomes it and sends its assignment if it lacks it. */
  connect(hello: AgentHello, link: SessionLink): AgentSession {
    const now = this.now();
    const record: AgentRecord = {
      hello,
      link,
      sessionId: randomUUID(),
      connectedAt: now,
      lastHeartbeatAt: now,
      models: hello.models,
      load: IDLE,
      offeredVersion: hello.ackedVersion,
      ackedVersion: hello.ackedVersion,
      pending: undefined,
      lastNack: undefined,
    };
    const session: AgentSession = {
      id: record.sessionId,
      agentId: hello.agentId,
      heartbeat: (load, models) => this.heartbeat(record, load, models),
      answer: (ack) => this.answer(record, ack),
      end: () => this.remove(record, "disconnected"),
    };
    if (this.closed) {
      link.end("closed", "the control plane is shutting down");
      return session;
    }
    const previous = this.records.get(hello.agentId);
    this.records.set(hello.agentId, record);
    previous?.link.end("replaced", `agent '${hello.agentId}' connected again: session ${record.sessionId} replaces ${previous.sessionId}`);
    this.sweeper ??= setInterval(() => this.sweep(), this.heartbeatIntervalMs).unref();
    link.send({ welcome: { session_id: record.sessionId, heartbeat_interval: durationOf(this.heartbeatIntervalMs), expiry: durationOf(this.expiryMs) } });
    this.offer(record);
    this.emit({ kind: "joined", agent: viewOf(record) });
    return session;
  }

  /** The live agents. */
  agents(): readonly AgentView[] {
    return [...this.records.values()].map(viewOf);
  }

  get(agentId: string): AgentView | undefined {
    const record = this.records.get(agentId);
    return record && viewOf(record);
  }

  /** Calls `listener` on every join, leave and update; returns the unsubscribe function. */
  onChange(listener: (change: RegistryChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Recomputes every agent's assignment and sends those that changed (after a config change). */
  reassign(): void {
    for (const record of this.records.values()) this.offer(record);
  }

  stats(): RegistryStats {
    return { agents: this.records.size, heartbeats: this.heartbeats, sweeping: this.sweeper !== undefined };
  }

  /** Ends every stream (UNAVAILABLE: agents reconnect elsewhere or later) and forgets everything. */
  close(): void {
    this.closed = true;
    const records = [...this.records.values()];
    this.records.clear();
    this.stopSweeping();
    for (const record of records) record.link.end("closed", "the control plane is shutting down");
    this.listeners.clear();
  }

  private isCurrent(record: AgentRecord): boolean {
    return this.records.get(record.hello.agentId) === record;
  }

  private heartbeat(record: AgentRecord, load: AgentLoad, models: readonly AgentModel[]): void {
    if (!this.isCurrent(record)) return;
    this.heartbeats++;
    record.lastHeartbeatAt = this.now();
    if (load.inFlight === record.load.inFlight && load.queued === record.load.queued && sameModels(models, record.models)) return;
    record.load = { inFlight: load.inFlight, queued: load.queued };
    record.models = models;
    this.emit({ kind: "updated", agent: viewOf(record) });
  }

  private answer(record: AgentRecord, ack: AckMessage): AckOutcome {
    const pending = record.pending;
    if (!this.isCurrent(record) || !pending || ack.nonce !== pending.nonce) return { kind: "stale" };
    record.pending = undefined;
    if (ack.error_detail) {
      record.lastNack = { version: pending.version, error: ack.error_detail, at: this.now() };
      this.emit({ kind: "updated", agent: viewOf(record) });
      return { kind: "nacked", version: pending.version, error: ack.error_detail };
    }
    record.ackedVersion = pending.version;
    record.lastNack = undefined;
    this.emit({ kind: "updated", agent: viewOf(record) });
    return { kind: "acked", version: pending.version };
  }

  /** Sends the agent its assignment unless it holds or was already sent this version. */
  private offer(record: AgentRecord): void {
    let models: readonly ModelSpec[] | undefined;
    try {
      models = this.options.assignmentsFor(viewOf(record));
    } catch (err) {
      this.logger.error({ err, agent_id: record.hello.agentId }, "computing the agent's assignment failed; it keeps what it holds");
      return;
    }
    if (models === undefined) return;
    const version = assignmentVersion(models);
    if (version === record.offeredVersion) return;
    const nonce = String(++this.nonces);
    record.offeredVersion = version;
    record.pending = { version, nonce };
    record.link.send({ assignment: { version, nonce, assignment: { agent_id: record.hello.agentId, models: canonicalModels(models) } } });
  }

  private remove(record: AgentRecord, reason: "disconnected" | "expired"): void {
    if (!this.isCurrent(record)) return;
    this.records.delete(record.hello.agentId);
    if (this.records.size === 0) this.stopSweeping();
    this.emit({ kind: "left", agent: viewOf(record), reason });
  }

  private sweep(): void {
    const now = this.now();
    for (const record of this.records.values()) {
      const silentMs = now - record.lastHeartbeatAt;
      if (silentMs < this.expiryMs) continue;
      this.remove(record, "expired");
      record.link.end("expired", `no heartbeat from agent '${record.hello.agentId}' for ${silentMs} ms (expiry ${this.expiryMs} ms)`);
    }
  }

  private stopSweeping(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private emit(change: RegistryChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (err) {
        this.logger.error({ err, change: change.kind, agent_id: change.agent.agentId }, "an edge-registry listener failed");
      }
    }
  }
}
