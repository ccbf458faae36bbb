/**
 * Gearbox's own ADS client (state of the world), used by ext_proc replicas to follow the control
 * plane: one stream to `gearbox xds`, one subscription per resource type. Each response is
 * applied by the subscriber; success is ACKed (`version_info` = the new version), failure is
 * NACKed with the subscriber's error and the last good version, so the control plane and its
 * logs know the replica kept what it had. The stream reconnects with exponential backoff and
 * jitter; on reconnect every type is re-requested with the last ACKed version, so the control
 * plane can skip what the replica already has. Between streams the replica keeps serving with
 * what it last applied: a control-plane restart is invisible to traffic.
 */
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../../common/telemetry/logger.ts";
import { adsService, type AnyMessage } from "../../common/control-plane/protos.ts";

export interface Subscription {
  typeUrl: string;
  /** Resource names; absent → wildcard (every resource of the type). */
  names?: readonly string[];
  /** Applies a full set of resources; returns an error message to NACK, nothing to ACK. */
  apply(resources: readonly AnyMessage[], version: string): string | undefined | Promise<string | undefined>;
}

export interface AdsClientOptions {
  /** `host:port` of the control plane. */
  address: string;
  node: { id: string; cluster: string; metadata?: Record<string, string> };
  subscriptions: readonly Subscription[];
  logger: Logger;
  backoff?: { initialMs: number; maxMs: number };
}

export interface AdsClientStatus {
  connected: boolean;
  /** Last ACKed version per type URL. */
  versions: Record<string, string>;
  acks: number;
  nacks: number;
  reconnects: number;
}

export interface AdsClient {
  status(): AdsClientStatus;
  /** Resolves once every subscription has applied one response (or `timeoutMs` passes: false). */
  ready(timeoutMs: number): Promise<boolean>;
  close(): void;
}

interface DiscoveryResponse {
  version_info?: string;
  resources?: AnyMessage[];
  type_url?: string;
  nonce?: string;
}

type AdsStream = grpc.ClientDuplexStream<Record<string, unknown>, DiscoveryResponse>;

export function startAdsClient(options: AdsClientOptions): AdsClient {
  const Ads = adsService();
  const client = new Ads(options.address, grpc.credentials.createInsecure(), { "grpc.keepalive_time_ms": 30_000 });
  const backoff = options.backoff ?? { initialMs: 200, maxMs: 5_000 };
  const versions: Record<string, string> = {};
  const applied = new Set<string>();
  const waiters: (() => void)[] = [];
  const state = { connected: false, acks: 0, nacks: 0, reconnects: 0 };
  let stream: AdsStream | undefined;
  let closed = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let delay = backoff.initialMs;

  const node = {
    id: options.node.id,
    cluster: options.node.cluster,
    user_agent_name: "gearbox-extproc",
    ...(options.node.metadata && { metadata: { fields: structFields(options.node.metadata) } }),
  };
  const byType = new Map(options.subscriptions.map((s) => [s.typeUrl, s]));

  function request(sub: Subscription, nonce: string, error?: string): Record<string, unknown> {
    return {
      ...(nonce === "" && { node }),
      type_url: sub.typeUrl,
      resource_names: sub.names ? [...sub.names] : [],
      version_info: versions[sub.typeUrl] ?? "",
      response_nonce: nonce,
      ...(error !== undefined && { error_detail: { code: grpc.status.INVALID_ARGUMENT, message: error } }),
    };
  }

  function connect(): void {
    if (closed) return;
    const open = client.StreamAggregatedResources as (() => AdsStream) | undefined;
    if (!open) throw new Error("the ADS service has no StreamAggregatedResources method");
    const s = open.call(client);
    stream = s;
    // Responses are applied one at a time, in order: a policy must not overtake the one before it.
    let chain: Promise<void> = Promise.resolve();
    s.on("data", (response: DiscoveryResponse) => {
      state.connected = true;
      delay = backoff.initialMs;
      chain = chain.then(() => handle(s, response));
    });
    s.on("error", (err: grpc.ServiceError) => {
      if (!closed && err.code !== grpc.status.CANCELLED)
        options.logger.warn({ err: err.message, address: options.address }, "control plane stream failed; reconnecting");
    });
    s.on("close", () => retry(s));
    s.on("end", () => retry(s));
    for (const sub of options.subscriptions) s.write(request(sub, ""));
  }

  async function handle(s: AdsStream, response: DiscoveryResponse): Promise<void> {
    const sub = byType.get(response.type_url ?? "");
    if (!sub || s !== stream) return;
    const version = response.version_info ?? "";
    let error: string | undefined;
    try {
      error = await sub.apply(response.resources ?? [], version);
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    if (s !== stream) return;
    if (error === undefined) {
      versions[sub.typeUrl] = version;
      state.acks++;
    } else {
      state.nacks++;
      options.logger.warn({ type_url: sub.typeUrl, version, error }, "control plane update refused (NACK); keeping the last good one");
    }
    s.write(request(sub, response.nonce ?? "", error));
    applied.add(sub.typeUrl);
    if (applied.size === byType.size) for (const wake of waiters.splice(0)) wake();
  }

  function retry(s: AdsStream): void {
    if (s !== stream) return;
    stream = undefined;
    state.connected = false;
    if (closed) return;
    state.reconnects++;
    const wait = delay * (0.5 + Math.random() * 0.5);
    delay = Math.min(backoff.maxMs, delay * 2);
    retryTimer = setTimeout(connect, wait);
    retryTimer.unref();
  }

  connect();
  return {
    status: () => ({ ...state, versions: { ...versions } }),
    ready: (timeoutMs) =>
      applied.size === byType.size
        ? Promise.resolve(true)
        : new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(false), timeoutMs);
            waiters.push(() => {
              clearTimeout(timer);
              resolve(true);
            });
          }),
    close: () => {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      const s = stream;
      stream = undefined;
      s?.cancel();
      client.close();
    },
  };
}

function structFields(metadata: Record<string, string>): Record<string, { string_value: string }> {
  const fields: Record<string, { string_value: string }> = {};
  for (const [k, v] of Object.entries(metadata)) fields[k] = { string_value: v };
  return fields;
}
