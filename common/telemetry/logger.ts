/**
 * Structured JSON logs (pino). One logger per process, children per component.
 *
 * Lines go to stdout asynchronously: a slow or stalled reader of the log never blocks the event
 * loop (a synchronous write to a full pipe would stop every request until the reader catches
 * up). What the reader has not taken yet waits in a buffer of at most `LOG_BUFFER_BYTES`; a line
 * that would overflow it is dropped and counted in `logStats.dropped`
 * (`gearbox_log_lines_dropped_total`). Buffered lines are written out synchronously when the
 * process exits.
 *
 * Lines are written in batches: once `LOG_BATCH_BYTES` have gathered, and in any case every
 * `LOG_FLUSH_MS`, so a line waits at most that long. Each write is a round trip through libuv's
 * thread pool (two thread wake-ups); one per line cost a gateway answering one client at a time
 * about 6 % of its CPU per request against batches (bench/RESULTS.md, issue 25). The flush timer
 * runs only while a line waits: sonic-boom's own `periodicFlush` writes an empty string through
 * the thread pool when nothing is buffered, 50 round trips a second on an idle gateway.
 */
import { pino, type Logger } from "pino";

export type { Logger };

/** Bytes of log lines waiting for the reader before new lines are dropped. */
export const LOG_BUFFER_BYTES = 16 * 1024 * 1024;

/** Bytes of lines that make a write. */
export const LOG_BATCH_BYTES = 32 * 1024;

/** The longest a line waits for its batch. */
export const LOG_FLUSH_MS = 20;

/** Log lines this process dropped because the reader fell `LOG_BUFFER_BYTES` behind. */
export const logStats = { dropped: 0 };

export function createLogger(level: string, component = "gearbox"): Logger {
  // Buffer mode: each line is encoded once and batches are concatenated; in its text mode sonic-boom
  // scans every line for its byte length, grows the batch as one string and encodes it twice
  // (for the write, then again to find what was written): 11-14 against 5-6 µs per line.
  const destination = pino.destination({
    dest: 1,
    sync: false,
    maxLength: LOG_BUFFER_BYTES,
    minLength: LOG_BATCH_BYTES,
    maxWrite: 2 * LOG_BATCH_BYTES,
    contentMode: "buffer",
  });
  // Bytes taken and not yet written: the flush timer runs while there are any. A flush while a
  // write is in flight does nothing (and sonic-boom leaves what is under a batch after that write
  // waiting), so the timer keeps coming back until all is out.
  let pending = 0;
  destination.on("drop", (line: Buffer) => {
    logStats.dropped++;
    pending -= line.length;
  });
  destination.on("write", (n: number) => void (pending -= n));
  // A failed write (pino stops logging on EPIPE: the reader is gone) ends the retries: the timer
  // would otherwise try again every interval with nothing that can succeed.
  destination.on("error", () => void (pending = 0));
  const writeBuffer = destination.write.bind(destination) as unknown as (line: Buffer) => boolean;
  let flushing: NodeJS.Timeout | undefined;
  const flush = () => {
    flushing = undefined;
    if (pending <= 0) return;
    try {
      destination.flush();
    } catch {
      return; // The destination was closed: nothing more is written.
    }
    arm();
  };
  const arm = () => {
    flushing = setTimeout(flush, LOG_FLUSH_MS);
    flushing.unref();
  };
  destination.write = (line: string): boolean => {
    const bytes = Buffer.from(line, "utf8");
    pending += bytes.length;
    const written = writeBuffer(bytes);
    if (flushing === undefined) arm();
    return written;
  };
  return pino({ level, base: { component }, timestamp: isoTime }, destination);
}

let second = NaN;
let secondPrefix = "";

/**
 * pino's `"time"` field, as `pino.stdTimeFunctions.isoTime` writes it (`2026-12-03T13:45:12.345Z`,
 * UTC, milliseconds), with the date and time up to the second formatted once per second rather
 * than by a `Date` per line.
 */
export function isoTime(now = Date.now()): string {
  const s = Math.floor(now / 1000);
  if (s !== second) {
    second = s;
    secondPrefix = new Date(s * 1000).toISOString().slice(0, 20);
  }
  const ms = now - s * 1000;
  return `,"time":"${secondPrefix}${ms < 10 ? "00" : ms < 100 ? "0" : ""}${ms}Z"`;
}

/** A logger that writes nothing (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
