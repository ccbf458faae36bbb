/**
 * Counters of the ext_proc server's streams, read by `/metrics` at scrape time
 * (`gearbox_extproc_streams_idle_released_total`). One per server; `serve` hands the same object
 * to the server and to the metrics.
 */
export class ExtProcStreamStats {
  /** Streams released by the server-side idle timeout (`extproc.stream_idle_ms`). */
  idleReleased = 0;
}
