/** Small builders shared by the control plane's tests: snapshots, edge agents, a log capture. */
import assert from "node:assert/strict";
import { pino } from "pino";
import type { Logger } from "../../common/telemetry/logger.ts";
import { createSnapshot, type Snapshot } from "../../xds/cache/snapshot.ts";
import type { AnyMessage } from "../../common/control-plane/protos.ts";
import type { EdgeEndpoint } from "../../common/registry/endpoint.ts";

/** A snapshot that must pass the consistency check. */
export function snapshotOf(resources: readonly AnyMessage[], version?: string): Snapshot {
  const result = createSnapshot(resources, version);
  assert.ok(result.ok, result.ok ? "" : result.errors.join("; "));
  return result.value;
}

export function agent(overrides: Partial<EdgeEndpoint> = {}): EdgeEndpoint {
  return {
    agentId: "agent-1",
    node: "node-a",
    address: "10.0.0.1:8088",
    models: ["qwen3:0.6b"],
    inFlight: 0,
    queued: 0,
    maxConcurrent: 4,
    maxQueue: 8,
    healthy: true,
    ...overrides,
  };
}

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** A debug-level logger whose lines are kept, parsed, in `lines`. */
export function capturingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}

/** pino's level number for `warn`. */
export const WARN = 40;
