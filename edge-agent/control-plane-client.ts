/**
 * The edge agent's stream to the control plane (`gearbox.v1.EdgeRegistryService/Connect`, see
 * `xds/registry/`). One stream at a time: hello (who, where, the models loaded now, the last
 * version applied), heartbeats with the load at the interval the welcome gives, and assignments
 * applied to the `ModelRegistry` by difference (`ModelRegistry.reconcile`: a model already loaded
 * with the same spec is not reloaded), answered with an ACK, or a NACK with the error (the agent
 * keeps its previous models). Assignments are applied one at a time; one that arrives while
 * another is being applied waits, and only the newest waiting one is applied.
 *
 * When the stream fails or ends, or the control plane goes away, the client reconnects with
 * exponential backoff and jitter, and resumes with the version it last applied: a control plane
 * that still assigns the same models sends nothing, so nothing is reloaded. Nothing is written to
 * disk; a restarted agent reloads its assignment. No failure here throws into the agent.
 */
import * as grpc from "@grpc/grpc-js";
import { fail, ok, type Result } from "../common/result.ts";
import type { Logger } from "../common/telemetry/logger.ts";
import { edgeRegistryService } from "../common/control-plane/protos.ts";
import { millisecondsOf, type AssignmentMessage, type ConnectRequest, type ConnectResponse, type ModelSpecMessage } from "../common/registry/wire.ts";
import type { ModelSpec } from "./engines/engine.ts";
import type { ModelRegistry } from "./registry.ts";

export interface ControlPlaneOptions {
  /** `host:port` of the control plane (`gearbox xds`). */
  address: string;
  agentId: string;
  node: string;
  /** `ip:port` other hosts dial for this agent's API. */
  advertiseAddress: string;
  labels?: Record<string, string>;
  registry: ModelRegistry;
  /** Per model, as the registry was created with. */
  capacity: { maxConcurrent: number; maxQueue: number };
  /** Work in progress now, summed over the models. */
  load: () => { inFlight: number; queued: number };
  logger: Logger;
  /** Reconnect delays: doubling from `initialMs` up to `maxMs`, each jittered to 50–100 %. Default 500 ms … 30 s. */
  backoff?: { initialMs: number; maxMs: number };
  /** Ollama server for assigned `ollama` models (an assignment names the model, not the host). */
  ollamaHost?: string;
}

export interface ControlPlaneStatus {
  /** A welcome arrived on the current stream. */
  connected: boolean;
  /** Of the current or last session ("" before the first welcome). */
  sessionId: string;
  /** The last assignment version applied ("" = none since the agent started). */
  ackedVersion: string;
  /** Streams opened after the first. */
  reconnects: number;
  /** The last stream failure or NACK ("" = none). */
  lastError: string;
}

export interface ControlPlaneClient {
  status(): ControlPlaneStatus;
  /** Stops reconnecting, closes the stream (the control plane drops the agent) and waits for an assignment being applied. */
  close(): Promise<void>;
}

type ConnectStream = grpc.ClientDuplexStream<ConnectRequest, ConnectResponse>;

const DEFAULT_BACKOFF = { initialMs: 500, maxMs: 30_000 };
/** Used when a welcome gives no interval. */
const DEFAULT_HEARTBEAT_MS = 5000;

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** An assignment's models as the registry loads them; names every bad field. */
function specsOf(models: readonly ModelSpecMessage[] | undefined, registry: ModelRegistry, ollamaHost: string | undefined): Result<ModelSpec[]> {
  const errors: string[] = [];
  const specs: ModelSpec[] = [];
  const seen = new Set<string>();
  for (const [i, m] of (models ?? []).entries()) {
    const where = `models[${i}]${m.id ? ` ('${m.id}')` : ""}`;
    if (!m.id) errors.push(`${where}: id is required`);
    else if (seen.has(m.id)) errors.push(`${where}: id assigned twice`);
    if (!m.source) errors.push(`${where}: source is required`);
    const engine = m.engine ?? "";
    if (!registry.hasEngine(engine)) errors.push(`${where}: unknown engine '${engine}'`);
    if (!m.id || !m.source || !registry.hasEngine(engine)) continue;
    seen.add(m.id);
    const spec: ModelSpec = { id: m.id, engine, source: m.source };
    if (m.threads) spec.threads = m.threads;
    if (m.context_length) spec.contextLength = m.context_length;
    if (m.tokenizer) spec.tokenizer = m.tokenizer;
    if (engine === "ollama" && ollamaHost !== undefined) spec.host = ollamaHost;
    specs.push(spec);
  }
  return errors.length > 0 ? fail(...errors) : ok(specs);
}

class ControlPlaneConnection implements ControlPlaneClient {
  private readonly client: grpc.Client & { Connect(): ConnectStream };
  private readonly backoff: { initialMs: number; maxMs: number };
  private call: ConnectStream | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private opened = 0;
  private connected = false;
  private sessionId = "";
  private ackedVersion = "";
  private lastError = "";
  private lastLoad = { inFlight: 0, queued: 0 };
  private closed = false;
  /** The newest assignment waiting to be applied, with the stream it came on. */
  private waiting: { call: ConnectStream; assignment: AssignmentMessage } | undefined;
  private applying: Promise<void> | undefined;

  constructor(private readonly options: ControlPlaneOptions) {
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    const Service = edgeRegistryService();
    this.client = new Service(options.address, grpc.credentials.createInsecure(), {
      // A control plane that vanishes without closing the connection is noticed by keepalive.
      "grpc.keepalive_time_ms": 20_000,
      "grpc.keepalive_timeout_ms": 10_000,
      // The channel's own reconnection follows the same backoff as the stream's.
      "grpc.initial_reconnect_backoff_ms": this.backoff.initialMs,
      "grpc.max_reconnect_backoff_ms": this.backoff.maxMs,
    }) as unknown as grpc.Client & { Connect(): ConnectStream };
    this.open();
  }

  status(): ControlPlaneStatus {
    return {
      connected: this.connected,
      sessionId: this.sessionId,
      ackedVersion: this.ackedVersion,
      reconnects: Math.max(0, this.opened - 1),
      lastError: this.lastError,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const call = this.call;
    this.drop();
    call?.cancel();
    await this.applying;
    this.client.close();
  }

  private open(): void {
    if (this.closed) return;
    this.opened++;
    let call: ConnectStream;
    try {
      call = this.client.Connect();
    } catch (err) {
      this.failed(`cannot open the stream: ${messageOf(err)}`);
      return;
    }
    this.call = call;
    call.on("data", (message: ConnectResponse) => this.receive(call, message));
    // Non-OK statuses arrive as 'error' and then 'status'; 'status' alone decides what happens next.
    call.on("error", () => undefined);
    call.on("status", (status: grpc.StatusObject) => {
      if (this.call !== call) return;
      this.drop();
      this.failed(status.code === grpc.status.OK ? "the control plane ended the stream" : `${grpc.status[status.code]}: ${status.details}`);
    });
    const { registry, capacity } = this.options;
    call.write({
      hello: {
        agent_id: this.options.agentId,
        node: this.options.node,
        address: this.options.advertiseAddress,
        models: registry.list().map((m) => ({ id: m.id, engine: m.engine })),
        capacity: { max_concurrent: capacity.maxConcurrent, max_queue: capacity.maxQueue },
        acked_version: this.ackedVersion,
        labels: this.options.labels ?? {},
      },
    });
  }

  /** Forgets the current stream and its heartbeats. */
  private drop(): void {
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    this.call = undefined;
    this.connected = false;
  }

  /** Schedules the next stream after a failure, with backoff and jitter. */
  private failed(reason: string): void {
    if (this.closed) return;
    this.lastError = reason;
    const ceiling = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** Math.min(this.failures, 30));
    const delayMs = Math.round(ceiling * (0.5 + Math.random() / 2));
    this.failures++;
    this.options.logger.warn({ reason, retry_in_ms: delayMs, attempt: this.failures }, "control plane stream lost; reconnecting");
    this.reconnectTimer = setTimeout(() => this.open(), delayMs);
  }

  private receive(call: ConnectStream, message: ConnectResponse): void {
    if (this.call !== call) return;
    switch (message.kind) {
      case "welcome": {
        const intervalMs = millisecondsOf(message.welcome?.heartbeat_interval) || DEFAULT_HEARTBEAT_MS;
        this.connected = true;
        this.failures = 0;
        this.sessionId = message.welcome?.session_id ?? "";
        this.options.logger.info(
          { session_id: this.sessionId, heartbeat_ms: intervalMs, acked_version: this.ackedVersion || undefined },
          "connected to the control plane",
        );
        clearInterval(this.heartbeatTimer);
        this.heartbeatTimer = setInterval(() => this.heartbeat(call), intervalMs).unref();
        this.heartbeat(call);
        return;
      }
      case "assignment":
        this.waiting = { call, assignment: message.assignment ?? {} };
        this.applying ??= this.applyWaiting();
        return;
      case undefined:
        this.options.logger.warn("control plane sent an empty message; ignored");
        return;
      default:
        return message.kind satisfies never;
    }
  }

  /** Sends the load and models; a failing load report sends the last good one (the heartbeat is also the liveness signal). */
  private heartbeat(call: ConnectStream): void {
    try {
      this.lastLoad = this.options.load();
    } catch (err) {
      this.options.logger.error({ err }, "reading the agent's load failed; reporting the last known load");
    }
    const models = this.options.registry.list().map((m) => ({ id: m.id, engine: m.engine }));
    call.write({ heartbeat: { in_flight: this.lastLoad.inFlight, queued: this.lastLoad.queued, models } });
  }

  /** Applies waiting assignments one at a time until none waits. */
  private async applyWaiting(): Promise<void> {
    try {
      for (let next = this.waiting; next; next = this.waiting) {
        this.waiting = undefined;
        await this.apply(next.call, next.assignment);
      }
    } finally {
      this.applying = undefined;
    }
  }

  private async apply(call: ConnectStream, assignment: AssignmentMessage): Promise<void> {
    const version = assignment.version ?? "";
    const specs = specsOf(assignment.assignment?.models, this.options.registry, this.options.ollamaHost);
    let error = specs.ok ? undefined : `invalid assignment: ${specs.errors.join("; ")}`;
    if (specs.ok) {
      try {
        const done = await this.options.registry.reconcile(specs.value);
        this.ackedVersion = version;
        this.options.logger.info({ version, ...done }, "assignment applied");
      } catch (err) {
        error = messageOf(err);
      }
    }
    if (error !== undefined) {
      this.lastError = `NACK ${version}: ${error}`;
      this.options.logger.warn({ version, error }, "assignment refused (NACK); keeping the models loaded");
    }
    // An answer belongs to the stream the assignment came on; a newer stream has sent its own hello.
    if (this.call === call) call.write({ ack: { version, nonce: assignment.nonce ?? "", ...(error !== undefined ? { error_detail: error } : {}) } });
  }
}

/** Opens the agent's stream to the control plane and keeps it open until `close()`. Throws only on a malformed address. */
export function connectControlPlane(options: ControlPlaneOptions): ControlPlaneClient {
  if (!/^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):\d{1,5}$/.test(options.address))
    throw new Error(`the control plane address must be host:port, got '${options.address}'`);
  return new ControlPlaneConnection(options);
}
