/**
 * Restores a streamed SSE answer event by event. Each event's JSON strings are restored; a
 * string whose end may be the beginning of a placeholder keeps that tail back (per JSON path:
 * `choices.0.delta.content`, `…tool_calls.0.function.arguments`, Anthropic's `delta.text`) and
 * puts it in front of the same path's next string. When an event comes that does not continue
 * the path (a finish chunk, `content_block_stop`, `[DONE]`, the stream's end), the held text goes
 * out first in a copy of the path's last event, that event's other strings below the top level
 * removed (`type` kept), so no client accumulates an id or a name twice.
 */
import type { Masker } from "./mask.ts";

interface Held {
  text: string;
  /** The last event that carried the path, parsed. */
  event: Record<string, unknown>;
  path: (string | number)[];
}

export class StreamRestorer {
  private pending = "";
  private readonly held = new Map<string, Held>();

  constructor(private readonly masker: Masker) {}

  /** The client's bytes for `chunk` (complete events only; a partial event waits for its end). */
  push(chunk: Buffer, end: boolean): Buffer {
    this.pending += chunk.toString("utf8");
    let out = "";
    for (;;) {
      const at = this.pending.indexOf("\n\n");
      if (at < 0) break;
      out += this.event(this.pending.slice(0, at + 2));
      this.pending = this.pending.slice(at + 2);
    }
    if (end) {
      if (this.pending.length > 0) out += this.event(this.pending);
      this.pending = "";
      out += this.flush(new Set());
    }
    return Buffer.from(out);
  }

  private event(raw: string): string {
    const line = /^data: ?(.*)$/m.exec(raw);
    const data = line?.[1];
    let parsed: unknown;
    if (data !== undefined && data.startsWith("{")) {
      try {
        parsed = JSON.parse(data);
      } catch {
        parsed = undefined;
      }
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return this.flush(new Set()) + this.masker.restore(raw, true);
    const event = parsed as Record<string, unknown>;
    const touched = new Set<string>();
    const before = this.held.size > 0 || data!.includes("<") ? this.visit(event, event, [], touched) : false;
    const flushed = this.flush(touched);
    if (!before) return flushed + raw;
    return flushed + raw.replace(data!, () => JSON.stringify(event));
  }

  /** Restores the strings of `node` in place; true when anything may have changed. */
  private visit(event: Record<string, unknown>, node: unknown, path: (string | number)[], touched: Set<string>): boolean {
    let changed = false;
    if (Array.isArray(node)) {
      node.forEach((x, i) => {
        if (typeof x === "object" && x !== null && this.visit(event, x, [...path, i], touched)) changed = true;
      });
      return changed;
    }
    if (node === null || typeof node !== "object") return false;
    const obj = node as Record<string, unknown>;
    for (const [k, v] of Object.entries(obj)) {
      if (typeof v === "string") {
        if (k === "type" || k === "id") continue;
        const p = [...path, k];
        const key = p.join(".");
        const held = this.held.get(key);
        const text = (held?.text ?? "") + v;
        if (!held && !v.includes("<")) continue;
        touched.add(key);
        const restored = this.masker.restore(text);
        const cut = this.masker.partialAt(restored);
        if (cut >= 0) {
          obj[k] = restored.slice(0, cut);
          this.held.set(key, { text: restored.slice(cut), event, path: p });
        } else {
          obj[k] = restored;
          this.held.delete(key);
        }
        changed = true;
      } else if (typeof v === "object" && v !== null) {
        if (this.visit(event, v, [...path, k], touched)) changed = true;
      }
    }
    return changed;
  }

  /** Events carrying the held text of every path `touched` does not continue. */
  private flush(touched: Set<string>): string {
    let out = "";
    for (const [key, held] of this.held) {
      if (touched.has(key)) continue;
      this.held.delete(key);
      out += `data: ${JSON.stringify(carrier(held))}\n\n`;
    }
    return out;
  }
}

/** A copy of the held path's last event carrying only the held text below the top level. */
function carrier(held: Held): unknown {
  const copy = structuredClone(held.event);
  let node: Record<string, unknown> | unknown[] = copy;
  held.path.forEach((step, depth) => {
    const last = depth === held.path.length - 1;
    if (last) {
      (node as Record<string, unknown>)[step as string] = held.text;
      return;
    }
    node = (node as Record<string | number, unknown>)[step as never] as Record<string, unknown> | unknown[];
    if (!Array.isArray(node)) {
      for (const [k, v] of Object.entries(node)) if (typeof v === "string" && k !== "type" && k !== held.path[depth + 1]) delete node[k];
    } else {
      // Other entries of the array (other choices, other tool calls) are not this path's.
      const keep = held.path[depth + 1] as number;
      for (let i = 0; i < node.length; i++) if (i !== keep) node[i] = null;
    }
  });
  return copy;
}
