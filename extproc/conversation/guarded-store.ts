/**
 * A Redis conversation store as the request path must see it: never the reason a call fails.
 * Reads go through `LastGood` (always a fresh read while Redis answers — a conversation changes
 * every turn —, the last value this replica read while it does not); writes are bounded by the
 * connection's command timeout and skipped while Redis is degraded (between probes). Anything
 * that still fails is the caller's to log and go on without: a failed read means the request
 * goes on with what the client sent, a failed write loses that exchange from the history.
 */
import type { Message } from "../../common/canonical/types.ts";
import { LastGood } from "../store/last-good.ts";
import type { StoreHealth } from "../store/store-health.ts";
import type { ConversationStore, ConversationSummary, ConversationTarget, StoredConversation } from "./store.ts";

export interface GuardOptions {
  health: StoreHealth;
  readTimeoutMs: number;
  maxStaleMs: number;
}

export class GuardedConversationStore implements ConversationStore {
  private readonly lastGood: LastGood<string, StoredConversation | undefined>;

  constructor(
    private readonly inner: ConversationStore,
    private readonly options: GuardOptions,
  ) {
    this.lastGood = new LastGood({
      health: options.health,
      freshMs: 0,
      maxStaleMs: options.maxStaleMs,
      readTimeoutMs: options.readTimeoutMs,
      maxEntries: 2_000,
    });
  }

  get(tenant: string, id: string): Promise<StoredConversation | undefined> {
    return Promise.resolve(this.lastGood.get(keyOf(tenant, id), () => this.inner.get(tenant, id)));
  }

  append(tenant: string, id: string, messages: readonly Message[], target: ConversationTarget): Promise<void> {
    return this.write("append", () => this.inner.append(tenant, id, messages, target));
  }

  saveSummary(tenant: string, id: string, summary: ConversationSummary): Promise<void> {
    return this.write("summary", () => this.inner.saveSummary(tenant, id, summary));
  }

  async compact(tenant: string, id: string, expectedDropped: number, summary: ConversationSummary): Promise<boolean> {
    let done = false;
    await this.write("compact", async () => {
      done = await this.inner.compact(tenant, id, expectedDropped, summary);
    });
    return done;
  }

  async delete(tenant: string, id: string): Promise<boolean> {
    this.lastGood.forget(keyOf(tenant, id));
    // An operator's delete must not silently fail: its error is the answer.
    return this.inner.delete(tenant, id);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private async write(operation: string, run: () => Promise<void>): Promise<void> {
    const { health } = this.options;
    if (!health.mayTry()) {
      health.fellBack();
      throw new Error(`conversations: Redis is degraded; ${operation} skipped`);
    }
    try {
      await run();
      health.succeeded();
    } catch (err) {
      health.failed(err, operation);
      throw err;
    }
  }
}

function keyOf(tenant: string, id: string): string {
  return `${tenant.length}:${tenant}:${id}`;
}
