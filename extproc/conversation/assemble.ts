/**
 * The history a request gets: the stored conversation in front of what the client sent, with no
 * message twice. The client may send only its new turn (the brief's way: the gateway keeps the
 * history), or still send the whole history, or the tail of it: the overlap with what is stored
 * is found and not repeated. The client's system messages are its own and come first.
 *
 * Cases, for stored S and the client's non-system messages C:
 *   1. S's last k messages are C's first k (largest k ≥ 1): S without them, then C;
 *   2. S appears whole inside C (the client kept more than the store): C alone;
 *   3. otherwise (the client sent only new messages): S, then C.
 * `newMessages` is what the exchange adds to the store.
 */
import type { Message } from "../../common/canonical/types.ts";

export interface Assembled {
  /** The client's system and developer messages. */
  system: Message[];
  /** Stored messages the client did not send, to put in front of its own. */
  prepend: Message[];
  /** The client's non-system messages. */
  client: Message[];
  /** The messages this exchange adds to the stored conversation. */
  newMessages: Message[];
}

export function assemble(stored: readonly Message[], messages: readonly Message[]): Assembled {
  const lead = messages.findIndex((m) => m.role !== "system" && m.role !== "developer");
  const split = lead < 0 ? messages.length : lead;
  const system = messages.slice(0, split);
  const client = messages.slice(split).filter((m) => m.role !== "system" && m.role !== "developer");
  if (stored.length === 0) return { system, prepend: [], client, newMessages: client };
  // Keys are made only for the messages compared (a client sending its new turn compares one).
  const s = new LazyKeys(stored);
  const c = new LazyKeys(client);
  for (let k = Math.min(s.length, c.length); k >= 1; k--) {
    if (sameRun(s, s.length - k, c, 0, k)) return { system, prepend: stored.slice(0, stored.length - k), client, newMessages: client.slice(k) };
  }
  for (let i = c.length - s.length; i >= 1; i--) {
    if (sameRun(s, 0, c, i, s.length)) return { system, prepend: [], client, newMessages: client.slice(i + s.length) };
  }
  return { system, prepend: [...stored], client, newMessages: client };
}

/** The messages' comparison keys, each made when first asked for. */
class LazyKeys {
  private readonly keys: (string | undefined)[] = [];

  constructor(private readonly messages: readonly Message[]) {}

  get length(): number {
    return this.messages.length;
  }

  at(i: number): string {
    return (this.keys[i] ??= keyOf(this.messages[i] as Message));
  }
}

function sameRun(a: LazyKeys, from: number, b: LazyKeys, at: number, length: number): boolean {
  for (let j = 0; j < length; j++) if (a.at(from + j) !== b.at(at + j)) return false;
  return true;
}

/** A message as compared for overlap: role, text, tool calls and the tool result's call. */
function keyOf(m: Message): string {
  const content = m.content;
  const text = typeof content === "string" ? content.trim() : content === null ? "" : JSON.stringify(content);
  switch (m.role) {
    case "assistant":
      return JSON.stringify(["assistant", text, (m.toolCalls ?? []).map((t) => [t.id, t.name, t.arguments])]);
    case "tool":
      return JSON.stringify(["tool", m.toolCallId, text]);
    case "system":
    case "developer":
    case "user":
      return JSON.stringify([m.role, text]);
    default:
      return m satisfies never;
  }
}
