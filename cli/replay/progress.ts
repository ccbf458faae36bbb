/**
 * The replay's progress on stderr: cli-progress's bar (rate, ETA, errors) on a terminal; on a
 * pipe or a file, the same text as a plain line every two seconds (cli-progress `noTTYOutput`).
 */
import cliProgress from "cli-progress";

export interface Progress {
  tick(error: boolean): void;
  note(line: string): void;
  stop(): void;
}

export function progress(total: number, stream: NodeJS.WriteStream = process.stderr): Progress {
  const started = performance.now();
  let done = 0;
  let errors = 0;
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: "replay {bar} {value}/{total} | {rate} req/s | ETA {eta_formatted} | errors {errors}",
      noTTYOutput: true,
      notTTYSchedule: 2000,
      etaBuffer: 200,
      fps: 5,
      hideCursor: false,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  const payload = () => ({ rate: (done / Math.max(0.001, (performance.now() - started) / 1000)).toFixed(1), errors });
  bar.start(total, 0, payload());
  return {
    tick(error) {
      done++;
      if (error) errors++;
      bar.update(done, payload());
    },
    note(line) {
      // Above the bar on a terminal; a plain line elsewhere.
      stream.write(stream.isTTY ? `\r\x1b[K${line}\n` : `${line}\n`);
      bar.render?.();
    },
    stop() {
      bar.update(done, payload());
      bar.stop();
    },
  };
}
