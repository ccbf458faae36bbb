/**
 * Entry ids ordered by expiry time (a binary min-heap), so a store can remove what has expired
 * without scanning every entry. Entries removed some other way stay in the heap until they come
 * due; `due` yields them anyway and the store skips ids it no longer holds (or holds with
 * another expiry, after a re-insert).
 */
export class ExpiryQueue {
  private readonly times: number[] = [];
  private readonly ids: string[] = [];

  get length(): number {
    return this.ids.length;
  }

  push(id: string, expiresAt: number): void {
    this.times.push(expiresAt);
    this.ids.push(id);
    let i = this.ids.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.times[parent]! <= expiresAt) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** Removes and returns every (id, expiresAt) with expiresAt ≤ `now`, soonest first. */
  *due(now: number): Generator<[id: string, expiresAt: number]> {
    while (this.times.length > 0 && this.times[0]! <= now) {
      const id = this.ids[0]!;
      const expiresAt = this.times[0]!;
      this.pop();
      yield [id, expiresAt];
    }
  }

  clear(): void {
    this.times.length = 0;
    this.ids.length = 0;
  }

  private pop(): void {
    const last = this.ids.length - 1;
    this.swap(0, last);
    this.times.pop();
    this.ids.pop();
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < last && this.times[left]! < this.times[smallest]!) smallest = left;
      if (right < last && this.times[right]! < this.times[smallest]!) smallest = right;
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }

  private swap(a: number, b: number): void {
    [this.times[a], this.times[b]] = [this.times[b]!, this.times[a]!];
    [this.ids[a], this.ids[b]] = [this.ids[b]!, this.ids[a]!];
  }
}
