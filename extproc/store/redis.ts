/**
 * Redis connections for Gearbox's shared state (limits today; any store may reuse it). Options
 * chosen so that Redis trouble costs a request at most one short wait, never a failure:
 *
 * - `commandTimeout` 50 ms: every command is bounded; past it the caller decides locally.
 * - `enableOfflineQueue: false`: while disconnected, commands fail at once instead of queueing
 *   (a queue would hold every request for the whole outage, then replay stale decisions).
 * - `maxRetriesPerRequest: 0`: a command caught by a dropped connection is not resent after
 *   the reconnect; it was already answered locally, and a resent admission would count twice.
 * - `retryStrategy`: reconnect forever, backing off to one attempt a second.
 * - `enableAutoPipelining`: commands issued in the same tick by concurrent requests leave in
 *   one write (one syscall, one round trip), which is most of the throughput under load.
 */
import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "../../common/telemetry/logger.ts";

export type { Redis };

const COMMAND_TIMEOUT_MS = 50;

export interface ConnectOptions {
  /** Per-command bound (ms); default 50. */
  commandTimeoutMs?: number;
  /** Connection errors are logged here at debug level (the failover logs the transitions). */
  logger?: Logger;
  /** The client's name in `CLIENT LIST`. */
  name?: string;
}

function redisOptions(options: ConnectOptions = {}): RedisOptions {
  return {
    commandTimeout: options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 1_000),
    enableAutoPipelining: true,
    connectionName: options.name ?? "gearbox",
  };
}

/** A client for `url` (`redis://host:port/db`), connecting in the background. */
export function connectRedis(url: string, options: ConnectOptions = {}): Redis {
  const client = new Redis(url, redisOptions(options));
  // Without a listener ioredis prints every failed reconnect to stderr.
  client.on("error", (err: Error) => options.logger?.debug({ err: err.message }, "redis connection error"));
  return client;
}

/** Resolves once `client` can take commands; rejects after `timeoutMs`. */
export function redisReady(client: Redis, timeoutMs = 2_000): Promise<void> {
  if (client.status === "ready") return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off("ready", onReady);
      reject(new Error(`Redis not ready after ${timeoutMs} ms (status ${client.status})`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once("ready", onReady);
  });
}
