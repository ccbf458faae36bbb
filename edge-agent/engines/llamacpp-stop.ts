/**
 * Stop strings over a token stream. Tokens are held back while their text could be the start of
 * a stop string, released once it cannot, and cut where a stop string begins: the stop string
 * itself is never emitted. A token that straddles the cut is emitted with the text before it.
 */

/** One item (a token event) with the text it adds. */
export interface TextItem<T> {
  item: T;
  text: string;
}

/** What a push released, and whether a stop string matched (then nothing more is emitted). */
export interface StopPush<T> {
  emit: Array<TextItem<T>>;
  stopped: boolean;
}

/** Holds back and cuts token events (`T`) for one generation's stop strings. */
export class StopStringBuffer<T> {
  private readonly stops: string[];
  private queue: Array<TextItem<T>> = [];
  private pending = "";

  /** Empty stop strings are ignored. */
  constructor(stops: readonly string[]) {
    this.stops = stops.filter((s) => s.length > 0);
  }

  push(item: T, text: string): StopPush<T> {
    if (this.stops.length === 0) return { emit: [{ item, text }], stopped: false };
    this.queue.push({ item, text });
    this.pending += text;

    let cut = -1;
    for (const stop of this.stops) {
      const at = this.pending.indexOf(stop);
      if (at !== -1 && (cut === -1 || at < cut)) cut = at;
    }
    if (cut !== -1) {
      const emit = this.release(cut, true);
      this.queue = [];
      this.pending = "";
      return { emit, stopped: true };
    }
    return { emit: this.release(this.pending.length - this.heldSuffix(), false), stopped: false };
  }

  /** Releases everything still held (generation ended without a stop string). */
  flush(): Array<TextItem<T>> {
    const emit = this.queue;
    this.queue = [];
    this.pending = "";
    return emit;
  }

  /** Length of the longest suffix of the pending text that begins some stop string. */
  private heldSuffix(): number {
    let longest = 0;
    for (const stop of this.stops) {
      const max = Math.min(stop.length - 1, this.pending.length);
      for (let n = max; n > longest; n--) {
        if (this.pending.endsWith(stop.slice(0, n))) {
          longest = n;
          break;
        }
      }
    }
    return longest;
  }

  /**
   * Takes queued items whose text ends at or before `boundary` (chars of pending text). With
   * `truncate`, the item straddling the boundary is emitted with its text cut at the boundary.
   */
  private release(boundary: number, truncate: boolean): Array<TextItem<T>> {
    const emit: Array<TextItem<T>> = [];
    let start = 0;
    let taken = 0;
    for (const entry of this.queue) {
      const end = start + entry.text.length;
      if (end <= boundary) {
        emit.push(entry);
        taken++;
        start = end;
        continue;
      }
      if (truncate && start < boundary) emit.push({ item: entry.item, text: entry.text.slice(0, boundary - start) });
      break;
    }
    if (!truncate) {
      this.queue = this.queue.slice(taken);
      this.pending = this.pending.slice(start);
    }
    return emit;
  }
}
