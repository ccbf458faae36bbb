/**
 * What state-of-the-world and delta streams share: the subscriber's node (from its first
 * request), the cache watch that pushes new snapshots, per-stream nonces, stats, and freeing
 * everything exactly once when the stream ends, however it ends (half-close, cancel, error).
 */
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../../common/telemetry/logger.ts";
import { TYPE_URLS } from "../../common/control-plane/protos.ts";
import type { NodeIdentity, SnapshotCache } from "../cache/cache.ts";
import type { Snapshot } from "../cache/snapshot.ts";
import type { AdsStats } from "./stats.ts";
import type { Tracer } from "@opentelemetry/api";
import { recordSpan } from "../tracing.ts";

export interface StreamDeps {
  cache: SnapshotCache;
  logger: Logger;
  stats: AdsStats;
  /** Spans for pushes (`telemetry.tracing`); absent → none. */
  tracer?: Tracer | undefined;
}

/**
 * Types are pushed in this order when one snapshot changes several (clusters before their
 * endpoints, listeners before their routes: make before break, as the xDS spec advises).
 */
const PUSH_ORDER: readonly string[] = [TYPE_URLS.cluster, TYPE_URLS.endpoints, TYPE_URLS.listener, TYPE_URLS.route];

export function pushOrder(typeUrls: Iterable<string>): string[] {
  const rank = (url: string): number => (PUSH_ORDER.includes(url) ? PUSH_ORDER.indexOf(url) : PUSH_ORDER.length);
  return [...typeUrls].sort((a, b) => rank(a) - rank(b));
}

type Call<Req, Res> = grpc.ServerDuplexStream<Req, Res>;

export abstract class AdsStream<Req extends { node?: NodeIdentity | null; type_url?: string }, Res> {
  protected node: NodeIdentity | undefined;
  protected logger: Logger;
  private unwatch: (() => void) | undefined;
  private nonces = 0;
  private closed = false;

  constructor(
    protected readonly call: Call<Req, Res>,
    protected readonly deps: StreamDeps,
    kind: "sotw" | "delta",
  ) {
    this.logger = deps.logger.child({ stream: kind, peer: call.getPeer() });
  }

  /** Starts serving the call; everything the stream holds is freed when the call ends. */
  start(): void {
    const call = this.call;
    this.deps.stats.openStreams++;
    call.on("data", (request: Req) => this.receive(request));
    call.on("end", () => {
      this.close("client closed the stream");
      call.end();
    });
    call.on("cancelled", () => this.close("cancelled"));
    call.on("error", (err: Error) => this.close(`error: ${err.message}`));
    call.on("close", () => this.close("closed"));
  }

  /** Handles one request of a known type (the node is set and the watch is open). */
  protected abstract onRequest(typeUrl: string, request: Req): void;

  /** Pushes what changed with `snapshot` to every type this stream subscribes to. */
  protected abstract onSnapshot(snapshot: Snapshot): void;

  /** The snapshot that serves this stream's node now. */
  protected snapshot(): Snapshot | undefined {
    return this.deps.cache.getSnapshot(this.group());
  }

  protected group(): string {
    return this.deps.cache.groupOf(this.node);
  }

  protected nextNonce(): string {
    return String(++this.nonces);
  }

  protected send(response: Res): void {
    if (this.closed) return;
    this.deps.stats.pushes++;
    this.call.write(response);
    recordSpan(this.deps.tracer, "gearbox.xds.push", "producer", () => {
      const r = response as {
        type_url?: string;
        version_info?: string;
        system_version_info?: string;
        nonce?: string;
        resources?: unknown[];
        removed_resources?: string[];
      };
      return {
        "xds.type_url": r.type_url ?? "",
        "xds.version": r.version_info ?? r.system_version_info ?? "",
        "xds.nonce": r.nonce ?? "",
        "xds.resources": r.resources?.length ?? 0,
        "xds.removed": r.removed_resources?.length ?? 0,
        "xds.node": this.node?.id ?? "",
        "xds.group": this.node?.cluster ?? "",
      };
    });
  }

  private receive(request: Req): void {
    if (this.closed) return;
    if (this.unwatch === undefined) {
      this.node = request.node ?? {};
      this.logger = this.logger.child({ node: this.node.id ?? "", group: this.node.cluster ?? "" });
      this.logger.debug("ADS stream opened");
      this.unwatch = this.deps.cache.watch(this.node, (snapshot) => {
        if (!this.closed) this.onSnapshot(snapshot);
      });
    }
    const typeUrl = request.type_url ?? "";
    if (typeUrl === "") {
      this.logger.warn("ADS request without type_url; ending the stream");
      this.call.emit("error", { code: grpc.status.INVALID_ARGUMENT, details: "type_url is required on ADS" });
      return;
    }
    this.onRequest(typeUrl, request);
  }

  private close(why: string): void {
    if (this.closed) return;
    this.closed = true;
    this.unwatch?.();
    this.unwatch = undefined;
    this.deps.stats.openStreams--;
    this.logger.debug({ why }, "ADS stream closed");
  }
}
