/**
 * Where a finished request goes: one call per request with its `RequestRecord`, which the sink
 * turns into the request-log line and metric updates. The processor gets it through
 * `ProcessorDeps.telemetry`; without one it writes the log line only (`logOnly`).
 *
 * Implementations: `request-telemetry.ts` (log line + Prometheus), `NO_TELEMETRY` (nothing; the
 * overhead bench's baseline).
 */
import type { GatewayConfig } from "../config/load.ts";
import type { RequestRecord } from "../processor/request-record.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import { writeRequestLog } from "./request-log.ts";

export interface Telemetry {
  /**
   * Records one finished request (`config`: the one it ran under). Must not throw or await. Both
   * transports call it once the answer's last bytes are written (`RequestContext.holdRecord`);
   * a throw there is logged (`request record failed`) and the answer is unaffected.
   */
  request(record: RequestRecord, config: GatewayConfig): void;
}

/** Writes nothing, counts nothing. */
export const NO_TELEMETRY: Telemetry = Object.freeze({ request: () => undefined });

const logOnlyByLogger = new WeakMap<Logger, Telemetry>();

/** The request-log line alone, on `logger` (the default: embedded use and tests without metrics). */
export function logOnly(logger: Logger): Telemetry {
  let sink = logOnlyByLogger.get(logger);
  if (!sink) logOnlyByLogger.set(logger, (sink = { request: (record) => writeRequestLog(logger, record) }));
  return sink;
}
