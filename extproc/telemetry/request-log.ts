/**
 * The request log: one structured JSON line (pino, message `request`) per finished request, with
 * the `RequestRecord`'s fields. Nothing in a record is prompt text or a key; absent fields are left
 * out of the line.
 */
import type { RequestRecord } from "../processor/request-record.ts";
import type { Logger } from "../../common/telemetry/logger.ts";

export function writeRequestLog(logger: Logger, record: RequestRecord): void {
  logger.info(record, "request");
}
