/**
 * Test and benchmark support for the ADS server: a real gRPC server on loopback serving a
 * `SnapshotCache`, and `AdsProbe`, a raw ADS stream (grpc-js client of `adsService()`) whose
 * responses are read one at a time, in order.
 */
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../../common/telemetry/logger.ts";
import { SnapshotCache } from "../../xds/cache/cache.ts";
import { addAdsService, type AdsStats } from "../../xds/server/ads.ts";
import { adsService } from "../../common/control-plane/protos.ts";

export interface AdsTestServer {
  address: string;
  cache: SnapshotCache;
  stats: AdsStats;
  close(): Promise<void>;
}

export async function startAdsServer(logger: Logger, cache: SnapshotCache = new SnapshotCache()): Promise<AdsTestServer> {
  const server = new grpc.Server();
  const stats = addAdsService(server, cache, logger);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  return {
    address: `127.0.0.1:${port}`,
    cache,
    stats,
    // Clients that stay subscribed (grpc-js-xds never lets go of its ADS stream) would keep a
    // graceful shutdown waiting: end their streams.
    close: () => {
      server.forceShutdown();
      return Promise.resolve();
    },
  };
}

type Method = "StreamAggregatedResources" | "DeltaAggregatedResources";

/** One ADS stream seen from the client side. */
export class AdsProbe<Req, Res> {
  private readonly queue: Res[] = [];
  private readonly waiters: { resolve: (r: Res) => void; reject: (e: Error) => void }[] = [];
  private ended: Error | undefined;
  private readonly client: grpc.Client;
  private readonly stream: grpc.ClientDuplexStream<Req, Res>;
  private readonly closed: Promise<void>;

  constructor(address: string, method: Method) {
    const Ads = adsService();
    this.client = new Ads(address, grpc.credentials.createInsecure());
    const open = (this.client as unknown as Record<Method, () => grpc.ClientDuplexStream<Req, Res>>)[method];
    this.stream = open.call(this.client);
    this.closed = new Promise((resolve) => this.stream.on("status", () => resolve()));
    this.stream.on("data", (response: Res) => {
      const waiter = this.waiters.shift();
      if (waiter) waiter.resolve(response);
      else this.queue.push(response);
    });
    this.stream.on("error", (err: Error) => this.end(err));
    this.stream.on("end", () => this.end(new Error("the server ended the stream")));
  }

  send(request: Req): void {
    this.stream.write(request);
  }

  /** The next response; rejects when the stream ends first or none comes within `guardMs` (a hang guard, not a timing check). */
  next(guardMs = 10_000): Promise<Res> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.ended) return Promise.reject(this.ended);
    return new Promise<Res>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ADS response within ${guardMs} ms`)), guardMs);
      this.waiters.push({
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
  }

  /** Responses received and not read yet. */
  pending(): number {
    return this.queue.length;
  }

  async close(): Promise<void> {
    this.stream.cancel();
    await this.closed;
    this.client.close();
  }

  private end(err: Error): void {
    this.ended ??= err;
    for (const waiter of this.waiters.splice(0)) waiter.reject(err);
  }
}
