/**
 * The devices connected to this replica, one session each, keyed by tenant and device id. It
 * knows nothing of HTTP: the channel (`channel.ts`) hands it a validated hello and a
 * `ChannelSink` (send an event, end the stream) per connection, and feeds it heartbeats and acks.
 *
 * - Sessions: a second hello for a device replaces the first, whose stream is ended (`closed:
 *   replaced`); what the device held on the server (decisions awaiting an outcome, commands not
 *   yet acknowledged) moves to the new session. The device's own report (models, active model,
 *   last policy and command) is the state: after a gateway restart the hello rebuilds the session
 *   and nothing is sent back, so no model is reloaded.
 * - Expiry: a device that sends no heartbeat for `expiry_ms` is removed with everything it held:
 *   its stream ended (`closed: expired`), its decisions' admissions released, its commands
 *   dropped. One unref'd timer sweeps the whole registry, running only while devices are listed.
 * - Policy: what devices need of the routing policy (threshold, upgrade, offline behaviour) under
 *   a version that only grows: a hello reporting a newer version with the same content is adopted,
 *   with other content the next version is above the device's, so a device never goes back, across
 *   gateway restarts too. A changed policy is pushed to every device on the next sweep.
 * - Commands (load, unload, switch): numbered per device above the last one its hello reported,
 *   kept until acknowledged, re-sent on reconnect.
 */
import { createHash, randomUUID } from "node:crypto";
import type { GatewayConfig } from "../config/load.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import { GatewayError } from "../../common/errors.ts";
import { fail, ok, type Result } from "../../common/result.ts";
import type { Ack, DeviceModel, Hello } from "./wire.ts";

/** Where the registry sends a device's events (the SSE stream). */
export interface ChannelSink {
  send(event: string, data: unknown): void;
  end(): void;
}

/** What a device needs of the routing policy. */
export interface DevicePolicy {
  readonly version: number;
  readonly hash: string;
  readonly confidence_threshold: number;
  /** A weak local answer is upgraded to the cloud (`route.fallback.enable`). */
  readonly upgrade: boolean;
  /** What the SDK does while the gateway is unreachable. */
  readonly offline: "local" | "fail";
}

export type CommandOp = "load" | "unload" | "switch";

export interface DeviceCommand {
  readonly id: number;
  readonly op: CommandOp;
  readonly model: string;
  readonly engine?: string;
  readonly source?: string;
}

/** Something the server holds for a device that must be released when the device goes. */
export interface Held {
  release(reason: string): void;
}

export interface DeviceSession {
  readonly key: string;
  readonly tenant: string;
  readonly deviceId: string;
  readonly session: string;
  readonly connectedAt: number;
  lastHeartbeatAt: number;
  inFlight: number;
  engines: string[];
  models: DeviceModel[];
  active: string | undefined;
  maxConcurrent: number;
  /** The last policy version the device applied (its hello, then its acks). */
  policyVersion: number;
  policyHash: string;
  /** The last policy version sent on this session (welcome or push). */
  sentPolicy: number;
  lastCommand: number;
  readonly pending: Map<number, DeviceCommand>;
  /** Decisions awaiting an outcome, by id. */
  readonly decisions: Map<string, Held>;
  readonly sink: ChannelSink;
}

/** One device as the admin API shows it (a copy). */
export interface DeviceView {
  tenant: string;
  device_id: string;
  session: string;
  connected_at: string;
  last_heartbeat_at: string;
  models: DeviceModel[];
  active: string | undefined;
  engines: string[];
  max_concurrent: number;
  in_flight: number;
  policy_version: number;
  last_command: number;
  pending_commands: DeviceCommand[];
  pending_decisions: number;
}

export interface RegistryOptions {
  /** The config requests run under now (the runtime's current snapshot's). */
  config: () => GatewayConfig;
  logger: Logger;
  now?: () => number;
}

export const deviceKey = (tenant: string, deviceId: string): string => `${tenant}/${deviceId}`;

export class DeviceRegistry {
  private readonly sessions = new Map<string, DeviceSession>();
  private readonly bySession = new Map<string, DeviceSession>();
  private timer: NodeJS.Timeout | undefined;
  private version = 0;
  private hash = "";
  private policyOf: GatewayConfig | undefined;
  private closed = false;
  private readonly now: () => number;
  /** Devices reclaimed for silence since the start. */
  expired = 0;
  /** Hellos since the start: first connections, and reconnections (a device resuming state: a policy it applied, or a session it replaces). */
  readonly connects = { new: 0, reconnect: 0 };
  /** Sessions ended since the start, by reason (`expired`, `revoked`, `replaced`, `shutdown`). */
  readonly ended = new Map<string, number>();

  constructor(private readonly o: RegistryOptions) {
    this.now = o.now ?? Date.now;
  }

  get size(): number {
    return this.sessions.size;
  }

  /** The policy devices get now, under its version. */
  policy(): DevicePolicy {
    const config = this.o.config();
    if (config !== this.policyOf) {
      this.policyOf = config;
      const hash = policyHash(config);
      if (hash !== this.hash) {
        this.hash = hash;
        this.version++;
      }
    }
    const f = config.route.fallback;
    return Object.freeze({
      version: this.version,
      hash: this.hash,
      confidence_threshold: f.confidence_threshold,
      upgrade: f.enable,
      offline: config.devices.offline,
    });
  }

  /** Opens a session for a valid hello; the welcome and any commands still unacknowledged go out on `sink`. */
  open(tenant: string, hello: Hello, sink: ChannelSink): Result<DeviceSession, GatewayError> {
    if (this.closed) return fail(new GatewayError(503, "server_error", "The gateway is shutting down; reconnect shortly.", { code: "shutting_down" }));
    const key = deviceKey(tenant, hello.device_id);
    const previous = this.sessions.get(key);
    const config = this.o.config();
    if (!previous && this.sessions.size >= config.devices.max_devices)
      return fail(
        new GatewayError(503, "server_error", `This replica holds ${config.devices.max_devices} devices (devices.max_devices); retry on another.`, {
          code: "too_many_devices",
        }),
      );
    let policy = this.policy();
    // Versions never go back: a device that applied a newer version keeps it (same content) or gets one above it.
    if (hello.policy.version > policy.version || (hello.policy.version === policy.version && hello.policy.hash !== policy.hash)) {
      this.version = hello.policy.hash === policy.hash ? hello.policy.version : hello.policy.version + 1;
      policy = this.policy();
    }
    const now = this.now();
    const session: DeviceSession = {
      key,
      tenant,
      deviceId: hello.device_id,
      session: randomUUID(),
      connectedAt: now,
      lastHeartbeatAt: now,
      inFlight: 0,
      engines: [...hello.engines],
      models: hello.models.map((m) => ({ ...m })),
      active: hello.active ?? hello.models[0]?.id,
      maxConcurrent: hello.capacity.max_concurrent,
      policyVersion: hello.policy.version,
      policyHash: hello.policy.hash,
      sentPolicy: policy.version,
      lastCommand: Math.max(hello.last_command, previous?.lastCommand ?? 0),
      pending: new Map(),
      decisions: new Map(),
      sink,
    };
    if (previous) {
      this.drop(previous, "replaced", false);
      for (const [id, held] of previous.decisions) session.decisions.set(id, held);
      for (const [id, c] of previous.pending) if (id > hello.last_command) session.pending.set(id, c);
    }
    this.sessions.set(key, session);
    this.bySession.set(session.session, session);
    this.connects[previous || hello.policy.version > 0 ? "reconnect" : "new"]++;
    sink.send("welcome", {
      session: session.session,
      device_id: session.deviceId,
      heartbeat_interval_ms: config.devices.heartbeat_interval_ms,
      expiry_ms: config.devices.expiry_ms,
      policy,
      resumed: hello.policy.version > 0 && hello.policy.hash === policy.hash,
    });
    for (const c of session.pending.values()) sink.send("command", c);
    this.o.logger.info({ tenant, device: session.deviceId, models: session.models.map((m) => m.id), replaced: previous !== undefined }, "device connected");
    this.arm();
    return ok(session);
  }

  /** The session `id` of `tenant`, if live. */
  session(tenant: string, id: string): DeviceSession | undefined {
    const s = this.bySession.get(id);
    return s && s.tenant === tenant ? s : undefined;
  }

  /** The session `id` whatever its tenant (a session whose key stopped working). */
  sessionById(id: string): DeviceSession | undefined {
    return this.bySession.get(id);
  }

  device(tenant: string, deviceId: string): DeviceSession | undefined {
    return this.sessions.get(deviceKey(tenant, deviceId));
  }

  heartbeat(s: DeviceSession, inFlight: number): void {
    s.lastHeartbeatAt = this.now();
    s.inFlight = inFlight;
  }

  /** Applies an acknowledgement; an unknown command id is an error (nothing changes). */
  ack(s: DeviceSession, a: Ack): Result<void> {
    if (a.command !== undefined) {
      if (!s.pending.has(a.command)) return fail(`ack.command: no command ${a.command} is awaiting an acknowledgement`);
      s.pending.delete(a.command);
      s.lastCommand = Math.max(s.lastCommand, a.command);
    }
    if (a.policy_version !== undefined && a.ok) {
      s.policyVersion = Math.max(s.policyVersion, a.policy_version);
      if (a.policy_version === this.version) s.policyHash = this.hash;
    }
    if (a.models) s.models = a.models.map((m) => ({ ...m }));
    if (a.active !== undefined) s.active = a.active;
    this.o.logger.info({ tenant: s.tenant, device: s.deviceId, command: a.command, policy: a.policy_version, ok: a.ok, error: a.error }, "device ack");
    return ok(undefined);
  }

  /** Queues a command for a connected device and sends it. */
  command(tenant: string, deviceId: string, c: Omit<DeviceCommand, "id">): Result<DeviceCommand, GatewayError> {
    const s = this.device(tenant, deviceId);
    if (!s)
      return fail(new GatewayError(404, "not_found_error", `Device '${deviceId}' of tenant '${tenant}' is not connected.`, { code: "device_not_connected" }));
    const last = Math.max(s.lastCommand, ...s.pending.keys());
    const command: DeviceCommand = { ...c, id: last + 1 };
    s.pending.set(command.id, command);
    s.sink.send("command", command);
    return ok(command);
  }

  /** The stream of `s` ended (the device went away): it stays listed until it expires or reconnects. */
  disconnected(s: DeviceSession): void {
    this.o.logger.debug({ tenant: s.tenant, device: s.deviceId }, "device channel closed");
  }

  /** Removes devices silent for `expiry_ms`, and pushes a changed policy. */
  sweep(): void {
    const now = this.now();
    const { expiry_ms } = this.o.config().devices;
    for (const s of [...this.sessions.values()]) {
      if (now - s.lastHeartbeatAt < expiry_ms) continue;
      this.expired++;
      this.o.logger.warn({ tenant: s.tenant, device: s.deviceId, silent_ms: now - s.lastHeartbeatAt }, "device expired: no heartbeat; reclaiming what it held");
      this.drop(s, "expired", true);
    }
    const policy = this.policy();
    for (const s of this.sessions.values()) {
      if (s.policyHash === policy.hash || s.sentPolicy >= policy.version) continue;
      s.sentPolicy = policy.version;
      s.sink.send("policy", policy);
    }
    if (this.sessions.size === 0) this.disarm();
  }

  /** Removes one device at once (its key was revoked, …). */
  remove(s: DeviceSession, reason: string): void {
    if (this.sessions.get(s.key) === s) this.drop(s, reason, true);
  }

  list(): DeviceView[] {
    return [...this.sessions.values()].map((s) => ({
      tenant: s.tenant,
      device_id: s.deviceId,
      session: s.session,
      connected_at: new Date(s.connectedAt).toISOString(),
      last_heartbeat_at: new Date(s.lastHeartbeatAt).toISOString(),
      models: s.models.map((m) => ({ ...m })),
      active: s.active,
      engines: [...s.engines],
      max_concurrent: s.maxConcurrent,
      in_flight: s.inFlight,
      policy_version: s.policyVersion,
      last_command: s.lastCommand,
      pending_commands: [...s.pending.values()],
      pending_decisions: s.decisions.size,
    }));
  }

  /** Ends every stream (`closed: shutdown`); devices reconnect to the next instance and resume. */
  close(): void {
    this.closed = true;
    for (const s of [...this.sessions.values()]) this.drop(s, "shutdown", true);
    this.disarm();
  }

  /** Connected devices by tenant. */
  connected(): Map<string, number> {
    const out = new Map<string, number>();
    for (const s of this.sessions.values()) out.set(s.tenant, (out.get(s.tenant) ?? 0) + 1);
    return out;
  }

  private drop(s: DeviceSession, reason: string, releaseHeld: boolean): void {
    this.ended.set(reason, (this.ended.get(reason) ?? 0) + 1);
    this.sessions.delete(s.key);
    this.bySession.delete(s.session);
    if (releaseHeld) {
      for (const held of s.decisions.values()) held.release(reason);
      s.decisions.clear();
      s.pending.clear();
    }
    s.sink.send("closed", { reason });
    s.sink.end();
  }

  private arm(): void {
    if (this.timer) return;
    const { heartbeat_interval_ms } = this.o.config().devices;
    this.timer = setInterval(() => this.sweep(), Math.max(50, Math.floor(heartbeat_interval_ms / 2)));
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** The content of what devices are told: the route section and the offline behaviour. */
function policyHash(config: GatewayConfig): string {
  const content = JSON.stringify({ route: config.route, offline: config.devices.offline, default_model: config.edge.default_model ?? null });
  return createHash("sha256").update(content).digest("hex").slice(0, 16);
}
