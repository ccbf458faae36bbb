/** Structured JSON logs (pino). One logger per process, children per component. */
import { pino, type Logger } from "pino";

export type { Logger };

export function createLogger(level: string, component = "gearbox"): Logger {
  return pino({ level, base: { component }, timestamp: pino.stdTimeFunctions.isoTime });
}

/** A logger that writes nothing (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
