/**
 * A promise rejected with no one to handle it is a Gearbox bug, not a reason to drop every call in
 * flight: Node ends the process on one by default (`--unhandled-rejections=throw`). A gateway
 * process logs it (error level, the rejection's message and stack; no request data is in a
 * rejection Gearbox raises), counts it (`gearbox_unhandled_rejections_total`) and serves on. An
 * uncaught exception still ends the process, as it may have left state half-changed: it is logged
 * first, and the log's buffer is written out at exit.
 */
import type { Logger } from "./logger.ts";

export const processFaults = { unhandledRejections: 0 };

let installed = false;

/** Installs the handlers once per process; `logger` is the process's logger. */
export function guardProcess(logger: Logger): void {
  if (installed) return;
  installed = true;
  process.on("unhandledRejection", (reason: unknown) => {
    processFaults.unhandledRejections++;
    logger.error({ err: reason }, "unhandled promise rejection (a bug): logged, serving on");
  });
  process.on("uncaughtExceptionMonitor", (err: Error) => {
    logger.fatal({ err }, "uncaught exception: the process ends");
  });
}
