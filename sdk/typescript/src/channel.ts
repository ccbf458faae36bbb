/**
 * The device's one long-lived control channel to the gateway: `POST /v1/device/connect` with the
 * hello, answered by a server-sent event stream (welcome, policy, command, closed); heartbeats and
 * acknowledgements are POSTs beside it.
 *
 * - Hello: device id, engines, loaded models, the active one, capacity, and what it last applied
 *   (policy version and hash, last command id): a reconnect resumes, so nothing is reloaded when
 *   nothing changed, and versions never go back (a pushed policy older than the one held is
 *   ignored).
 * - Heartbeats every `heartbeat_interval_ms` (the welcome's); a `404 unknown_session` (the
 *   gateway restarted or expired the device) reconnects at once.
 * - Reconnect: on a stream that ends or fails, after a full-jitter back-off (random in
 *   [0, min(maxMs, baseMs·2^attempt)]), reset by a welcome. A permanent refusal (400, 401, 403,
 *   413…: a revoked key, a bad hello) stops the channel and is emitted as `error`.
 * - Commands are applied to `DeviceModels` and acknowledged (ok, or the error), policies too.
 *
 * Events: `welcome` (the welcome), `policy`, `command` (after its ack), `disconnected` (reason),
 * `error` (a permanent `GearboxError`).
 */
import { EventEmitter } from "node:events";
import type { DeviceModels, Command } from "./device-models.ts";
import { GearboxError } from "./errors.ts";
import { readSse } from "./sse.ts";

export interface Policy {
  version: number;
  hash: string;
  confidence_threshold: number;
  upgrade: boolean;
  offline: "local" | "fail";
}

export interface Welcome {
  session: string;
  device_id: string;
  heartbeat_interval_ms: number;
  expiry_ms: number;
  policy: Policy;
  resumed: boolean;
}

export interface ChannelOptions {
  /** The gateway's origin (`http://gateway:8080`). */
  origin: string;
  apiKey?: string;
  deviceId: string;
  models: DeviceModels;
  maxConcurrent?: number;
  /** Back-off before reconnect attempt n: random in [0, min(maxMs, baseMs·2^n)]. */
  backoff?: { baseMs: number; maxMs: number };
  /** What was applied before this process (a policy and command id kept by the app), if any. */
  resume?: { policy?: Policy; lastCommand?: number };
}

export class DeviceChannel extends EventEmitter {
  policy: Policy | undefined;
  session: string | undefined;
  lastCommand: number;
  /** Welcomes received (1 + reconnects). */
  connections = 0;
  private abort: AbortController | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private attempt = 0;
  private closed = false;
  private paused = false;
  private inFlight = 0;
  private commands: Promise<void> = Promise.resolve();

  constructor(private readonly o: ChannelOptions) {
    super();
    this.policy = o.resume?.policy;
    this.lastCommand = o.resume?.lastCommand ?? 0;
  }

  /** Connects; resolves on the first welcome, rejects on a permanent refusal. */
  start(): Promise<Welcome> {
    return new Promise((resolve, reject) => {
      const onWelcome = (w: Welcome) => {
        this.off("error", onError);
        resolve(w);
      };
      const onError = (err: unknown) => {
        this.off("welcome", onWelcome);
        reject(err instanceof Error ? err : new Error(String(err)));
      };
      this.once("welcome", onWelcome);
      this.once("error", onError);
      void this.connect();
    });
  }

  /** Stops heartbeats (tests: a device gone silent); the stream stays open. */
  pauseHeartbeats(): void {
    this.paused = true;
  }

  /** Calls being answered locally now, reported in heartbeats. */
  track(delta: 1 | -1): void {
    this.inFlight = Math.max(0, this.inFlight + delta);
  }

  close(): void {
    this.closed = true;
    clearInterval(this.heartbeat);
    clearTimeout(this.retry);
    this.abort?.abort();
  }

  private headers(): Record<string, string> {
    return { "content-type": "application/json", ...(this.o.apiKey !== undefined && { authorization: `Bearer ${this.o.apiKey}` }) };
  }

  private hello(): unknown {
    return {
      device_id: this.o.deviceId,
      engines: this.o.models.engines(),
      models: this.o.models.list(),
      ...(this.o.models.activeModel !== undefined && { active: this.o.models.activeModel }),
      capacity: { max_concurrent: this.o.maxConcurrent ?? 1 },
      policy: { version: this.policy?.version ?? 0, hash: this.policy?.hash ?? "" },
      last_command: this.lastCommand,
      sdk: "gearbox-typescript/0.1.0",
    };
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const abort = new AbortController();
    this.abort = abort;
    let reason = "stream ended";
    try {
      const res = await fetch(`${this.o.origin}/v1/device/connect`, {
        method: "POST",
        headers: this.headers(),
        body: JSON.stringify(this.hello()),
        signal: abort.signal,
      });
      if (!res.ok) {
        const err = GearboxError.fromBody(res.status, await res.text());
        if (err.permanent) return this.fail(err);
        throw err;
      }
      if (!res.body) throw new Error("the connect answer has no body");
      for await (const e of readSse(res.body)) this.onEvent(e.event, JSON.parse(e.data) as unknown);
    } catch (err) {
      if (this.closed) return;
      reason = err instanceof Error ? err.message : String(err);
    }
    clearInterval(this.heartbeat);
    this.session = undefined;
    if (this.closed) return;
    this.emit("disconnected", reason);
    this.reconnectLater();
  }

  private reconnectLater(): void {
    const { baseMs, maxMs } = this.o.backoff ?? { baseMs: 250, maxMs: 10_000 };
    const delay = Math.random() * Math.min(maxMs, baseMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 20);
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.connect(), delay);
  }

  private fail(err: GearboxError): void {
    this.closed = true;
    clearInterval(this.heartbeat);
    this.emit("error", err);
  }

  private onEvent(event: string, data: unknown): void {
    switch (event) {
      case "welcome": {
        const w = data as Welcome;
        this.session = w.session;
        this.attempt = 0;
        this.connections++;
        this.applyPolicy(w.policy, false);
        clearInterval(this.heartbeat);
        this.heartbeat = setInterval(() => void this.beat(), w.heartbeat_interval_ms);
        this.heartbeat.unref();
        this.emit("welcome", w);
        return;
      }
      case "policy":
        this.applyPolicy(data as Policy, true);
        return;
      case "command":
        // One at a time, in order: a switch after a load waits for the load.
        this.commands = this.commands.then(() => this.run(data as Command));
        return;
      case "closed":
        this.emit("closed", (data as { reason?: string }).reason ?? "");
        return;
      case "error": {
        const err = GearboxError.fromBody(503, typeof data === "string" ? data : JSON.stringify(data));
        this.emit("disconnected", err.message);
        return;
      }
      default:
        return; // events of a newer gateway: ignored
    }
  }

  /** Takes a policy newer than the one held (never an older one), acknowledging pushed ones. */
  private applyPolicy(p: Policy, pushed: boolean): void {
    if (this.policy && p.version < this.policy.version) return;
    this.policy = p;
    this.emit("policy", p);
    if (pushed) this.post("ack", { session: this.session, policy_version: p.version, ok: true }).catch(() => undefined);
  }

  private async run(c: Command): Promise<void> {
    let error: string | undefined;
    try {
      await this.o.models.apply(c);
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    this.lastCommand = Math.max(this.lastCommand, c.id);
    const active = this.o.models.activeModel;
    // An ack lost with the connection: the command is re-sent on reconnect if the gateway still has it.
    await this.post("ack", {
      session: this.session,
      command: c.id,
      ok: error === undefined,
      ...(error !== undefined && { error }),
      models: this.o.models.list(),
      ...(active !== undefined && { active }),
    }).catch(() => undefined);
    this.emit("command", c, error);
  }

  private async beat(): Promise<void> {
    if (this.paused || !this.session) return;
    try {
      await this.post("heartbeat", { session: this.session, in_flight: this.inFlight });
    } catch (err) {
      if (err instanceof GearboxError && err.status === 404) {
        // The gateway lost the session (restart, expiry): a new hello now, resuming.
        this.abort?.abort();
        return;
      }
      if (err instanceof GearboxError && err.permanent) {
        this.abort?.abort();
        this.fail(err);
      }
      // Unreachable: the stream fails too, and reconnects.
    }
  }

  private async post(verb: string, body: unknown): Promise<void> {
    if (!this.session) return;
    const res = await fetch(`${this.o.origin}/v1/device/${verb}`, { method: "POST", headers: this.headers(), body: JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw GearboxError.fromBody(res.status, text);
  }
}
