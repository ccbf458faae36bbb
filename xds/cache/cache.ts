/**
 * The snapshot cache: the current snapshot of each node group, and watches that tell open
 * streams the moment the snapshot they serve changes.
 *
 * A subscriber's group is its `node.cluster`; a group with no snapshot of its own is served
 * the `default` group's. Versions only grow for a subscriber: a snapshot set with a version not
 * above the group's current one is re-issued under a fresh version, and `advancePast` re-issues
 * the current snapshot above a version a reconnecting client reports (one issued by an earlier
 * control plane whose clock ran ahead).
 */
import type { Snapshot } from "./snapshot.ts";
import { withVersion } from "./snapshot.ts";
import { compareVersions, nextVersion, observeVersion } from "./version.ts";

/** The group whose snapshot serves subscribers of groups that have none. */
export const DEFAULT_GROUP = "default";

/** What the cache reads of an xDS `Node`. */
export interface NodeIdentity {
  id?: string;
  cluster?: string;
}

/** Called with the snapshot a watch resolves to, whenever it changes. */
export type SnapshotListener = (snapshot: Snapshot) => void;

export class SnapshotCache {
  private readonly snapshots = new Map<string, Snapshot>();
  /** Group a subscriber asked for (its `node.cluster`) → listeners. */
  private readonly watchers = new Map<string, Set<SnapshotListener>>();

  /**
   * Publishes `snapshot` for `group` and notifies the watches it serves (synchronously).
   * Returns the snapshot as stored: re-versioned when its version was not above the current one.
   */
  setSnapshot(group: string, snapshot: Snapshot): Snapshot {
    const current = this.snapshots.get(group);
    if (current === snapshot) return current;
    let stored = snapshot;
    if (current !== undefined) {
      const order = compareVersions(snapshot.version, current.version);
      if (snapshot.version === current.version || (order !== undefined && order <= 0)) stored = withVersion(snapshot, nextVersion());
    }
    observeVersion(stored.version);
    this.snapshots.set(group, stored);
    this.notify(group, stored);
    return stored;
  }

  getSnapshot(group: string): Snapshot | undefined {
    return this.snapshots.get(group);
  }

  /** The group that serves `node`: its `cluster` when that group has a snapshot, else `default`. */
  groupOf(node: NodeIdentity | null | undefined): string {
    const cluster = node?.cluster ?? "";
    return cluster !== "" && this.snapshots.has(cluster) ? cluster : DEFAULT_GROUP;
  }

  /**
   * Calls `listener` whenever the snapshot serving `node` changes (including when its group
   * gets a snapshot of its own). Returns the function that ends the watch.
   */
  watch(node: NodeIdentity | null | undefined, listener: SnapshotListener): () => void {
    const key = node?.cluster ?? "";
    const listeners = this.watchers.get(key) ?? new Set<SnapshotListener>();
    listeners.add(listener);
    this.watchers.set(key, listeners);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.watchers.get(key) === listeners) this.watchers.delete(key);
    };
  }

  /**
   * Re-issues `group`'s snapshot under a version above `version` (a version a client reports
   * having), so what it is sent next is not older than what it has. Returns the new snapshot,
   * or undefined when the group has none.
   */
  advancePast(group: string, version: string): Snapshot | undefined {
    const current = this.snapshots.get(group);
    if (current === undefined) return undefined;
    observeVersion(version);
    return this.setSnapshot(group, withVersion(current, nextVersion()));
  }

  /** Number of open watches (streams), for stats and tests. */
  watchCount(): number {
    let count = 0;
    for (const listeners of this.watchers.values()) count += listeners.size;
    return count;
  }

  private notify(group: string, snapshot: Snapshot): void {
    for (const [key, listeners] of this.watchers) {
      const served = key === group || (group === DEFAULT_GROUP && !this.snapshots.has(key));
      if (served) for (const listener of [...listeners]) listener(snapshot);
    }
  }
}
