/**
 * What one stream subscribes to for one resource type: named resources and/or the wildcard,
 * following the xDS protocol's rules for both variants:
 *
 * - `*` among the names subscribes to the wildcard explicitly;
 * - an empty name list in the first request for a type is the legacy wildcard (what Envoy sends
 *   for CDS and LDS); in state of the world it lasts while the lists stay empty, and any list of
 *   names without `*` ends it (a later empty list then means "nothing");
 * - delta: `resource_names_subscribe` / `_unsubscribe` add and remove names (and `*`); an empty
 *   first subscribe is the legacy wildcard, which subscribing to specific names ends.
 */

export const WILDCARD = "*";

export class Subscription {
  private wildcardFlag = false;
  private legacy = false;
  private readonly named = new Set<string>();

  get wildcard(): boolean {
    return this.wildcardFlag;
  }

  /** The explicitly named resources. */
  get names(): ReadonlySet<string> {
    return this.named;
  }

  /** State of the world: `names` is the whole subscription. */
  applySotw(names: readonly string[], first: boolean): void {
    this.named.clear();
    for (const name of names) if (name !== WILDCARD) this.named.add(name);
    if (names.includes(WILDCARD)) {
      this.wildcardFlag = true;
      this.legacy = false;
    } else if (names.length === 0 && (first || this.legacy)) {
      this.wildcardFlag = true;
      this.legacy = true;
    } else {
      this.wildcardFlag = false;
      this.legacy = false;
    }
  }

  /** Delta: names added and removed. */
  applyDelta(subscribe: readonly string[], unsubscribe: readonly string[], first: boolean): void {
    if (first && subscribe.length === 0) {
      this.wildcardFlag = true;
      this.legacy = true;
    }
    for (const name of subscribe) {
      if (name === WILDCARD) {
        this.wildcardFlag = true;
        this.legacy = false;
      } else {
        this.named.add(name);
        if (this.legacy) this.wildcardFlag = this.legacy = false;
      }
    }
    for (const name of unsubscribe) {
      if (name === WILDCARD) this.wildcardFlag = this.legacy = false;
      else this.named.delete(name);
    }
  }

  /** Whether the resource `name` is subscribed to (by name or through the wildcard). */
  covers(name: string): boolean {
    return this.wildcardFlag || this.named.has(name);
  }
}
