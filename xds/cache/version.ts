/**
 * Snapshot versions: `<ms since the epoch, 15 digits>-<sequence, 6 digits>`, e.g.
 * `001764460800123-000000`. Fixed width, so string order is time order. The clock is the
 * wall clock, never allowed to step back within a process (a later version is always greater),
 * so a restarted control plane issues versions above the ones it issued before, with no state
 * kept anywhere. When a subscriber reports a version above the clock (clock skew between
 * replicas, a clock set back), `observeVersion` moves the clock past it.
 */

const MS_DIGITS = 15;
const SEQUENCE_DIGITS = 6;
const MAX_SEQUENCE = 10 ** SEQUENCE_DIGITS - 1;
const VERSION_PATTERN = new RegExp(`^(\\d{${MS_DIGITS}})-(\\d{${SEQUENCE_DIGITS}})$`);

let lastMs = 0;
let sequence = 0;

function format(ms: number, seq: number): string {
  return `${String(ms).padStart(MS_DIGITS, "0")}-${String(seq).padStart(SEQUENCE_DIGITS, "0")}`;
}

function parse(version: string): { ms: number; seq: number } | undefined {
  const match = VERSION_PATTERN.exec(version);
  if (!match) return undefined;
  return { ms: Number(match[1]), seq: Number(match[2]) };
}

/** A version greater than every version this process issued or observed. */
export function nextVersion(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    sequence = 0;
  } else if (sequence < MAX_SEQUENCE) {
    sequence++;
  } else {
    lastMs++;
    sequence = 0;
  }
  return format(lastMs, sequence);
}

/** Moves the clock past `version` (when it is in Gearbox's format and ahead of the clock). */
export function observeVersion(version: string): void {
  const seen = parse(version);
  if (!seen) return;
  if (seen.ms > lastMs || (seen.ms === lastMs && seen.seq > sequence)) {
    lastMs = seen.ms;
    sequence = seen.seq;
  }
}

/**
 * Orders two versions: negative, zero or positive like a comparator; undefined when either is
 * not in Gearbox's format (a version from another control plane says nothing about order).
 */
export function compareVersions(a: string, b: string): number | undefined {
  if (!parse(a) || !parse(b)) return undefined;
  return a < b ? -1 : a > b ? 1 : 0;
}
