/**
 * Masking and restoration. A request's values in the categories its policy redacts are replaced,
 * in every string of the body (system prompt, messages, tool arguments and results), by
 * placeholders `<EMAIL_1_k3f9>`: stable (one value, one placeholder in the request) and carrying
 * a per-request nonce that occurs nowhere in the request, so text that already looks like a
 * placeholder cannot be taken for one. The answer is restored before it reaches the client:
 * a whole JSON body, an SSE stream (a placeholder may be split across events: its prefix is held
 * back until the rest arrives), tool-call arguments alike. A placeholder never issued stays as is.
 */
import { randomBytes } from "node:crypto";
import { detect, type Category, type Detection } from "./detect.ts";
import type { BoundaryPolicy } from "./policy.ts";

const LABELS: Record<Category, string> = {
  email: "EMAIL",
  phone: "PHONE",
  national_id: "ID",
  bank_card: "CARD",
  iban: "IBAN",
  ip: "IP",
  secret: "SECRET",
  keyword: "KEYWORD",
  marker: "MARKER",
  name: "NAME",
  address: "ADDRESS",
};

/** Keys whose values are protocol, not text. */
const SKIP_KEYS = new Set(["model", "role", "type", "tool_call_id", "id", "object"]);

export type Scan =
  | { kind: "clean" }
  | { kind: "block"; category: Category; counts: Counts }
  | { kind: "edge_only"; category: Category | "detector_error"; counts: Counts }
  | { kind: "redacted"; body: unknown; masker: Masker; counts: Counts };

export type Counts = Partial<Record<Category, number>>;

/** One request's placeholders. */
export class Masker {
  readonly nonce: string;
  private readonly byValue = new Map<string, string>();
  private readonly byPlaceholder = new Map<string, string>();
  private readonly next: Partial<Record<Category, number>> = {};
  /** Built on first restore: compiling it costs more than the rest of a clean request's masking. */
  private pattern: RegExp | undefined;

  /** `taken`: the request's text; the nonce is one it does not contain. */
  constructor(taken: string, nonce?: string) {
    let n = nonce ?? fresh();
    while (taken.includes(`_${n}>`)) n = fresh();
    this.nonce = n;
  }

  get size(): number {
    return this.byValue.size;
  }

  placeholder(category: Category, value: string): string {
    const known = this.byValue.get(value);
    if (known) return known;
    const i = (this.next[category] ?? 0) + 1;
    this.next[category] = i;
    const p = `<${LABELS[category]}_${i}_${this.nonce}>`;
    this.byValue.set(value, p);
    this.byPlaceholder.set(p, value);
    return p;
  }

  /** `text` with every issued placeholder replaced by its value; `escape`: the value JSON-escaped (inside a JSON string). */
  restore(text: string, escape = false): string {
    if (!text.includes(this.nonce)) return text;
    this.pattern ??= new RegExp(`<[A-Z]+_\\d+_${this.nonce}>`, "g");
    this.pattern.lastIndex = 0;
    return text.replace(this.pattern, (p) => {
      const v = this.byPlaceholder.get(p);
      if (v === undefined) return p;
      return escape ? JSON.stringify(v).slice(1, -1) : v;
    });
  }

  /** A JSON or SSE body (UTF-8) restored; placeholders only sit inside JSON strings, so values go in escaped. */
  restoreBody(body: Buffer): Buffer {
    const text = body.toString("utf8");
    if (!text.includes(this.nonce)) return body;
    return Buffer.from(this.restore(text, true));
  }

  /** How long a held-back tail may be: the longest placeholder. */
  get maxLength(): number {
    return 2 + 8 + 1 + 6 + 1 + this.nonce.length;
  }

  /** Where, at the end of `text`, a placeholder may have begun (its prefix so far); -1: nowhere. */
  partialAt(text: string): number {
    const from = text.lastIndexOf("<");
    if (from < 0 || text.length - from > this.maxLength) return -1;
    const tail = text.slice(from);
    return placeholderPrefix(tail, this.nonce) ? from : -1;
  }
}

// Nonces come from a pool of random bytes (one `randomBytes` call per 1,365 requests, not per request).
const pool = Buffer.alloc(4095);
let used = pool.length;

function fresh(): string {
  if (used + 3 > pool.length) {
    randomBytes(pool.length).copy(pool);
    used = 0;
  }
  used += 3;
  return pool.toString("hex", used - 3, used);
}

/** `tail` (starting with `<`, no `>`) could still grow into `<LABEL_n_nonce>`. */
function placeholderPrefix(tail: string, nonce: string): boolean {
  const m = /^<([A-Z]*)(?:_(\d*)(?:_([0-9a-f]*))?)?$/.exec(tail);
  if (!m) return false;
  return m[3] === undefined || nonce.startsWith(m[3]);
}

/**
 * Scans a parsed request body under `policy`: the strictest action any detection asks for, and
 * for `redact` the body with the values masked. A detector that throws fails closed (edge only).
 */
export function scanBody(body: unknown, policy: BoundaryPolicy, raw: string): Scan {
  const counts: Counts = {};
  // Each string's detections, kept for the masking pass (detection runs once per string).
  const seen = new Map<string, Detection[]>();
  let blocked: Category | undefined;
  let edge: Category | undefined;
  let redacts = false;
  try {
    visit(body, undefined, (s) => {
      const found = detect(s, policy.rules);
      if (found.length === 0) return;
      const ds = found.filter((d) => policy.actions[d.category] !== "allow");
      if (ds.length === 0) return;
      seen.set(s, ds);
      for (const d of ds) {
        counts[d.category] = (counts[d.category] ?? 0) + 1;
        const a = policy.actions[d.category];
        if (a === "block") blocked ??= d.category;
        else if (a === "edge_only") edge ??= d.category;
        else redacts = true;
      }
    });
  } catch {
    return { kind: "edge_only", category: "detector_error", counts };
  }
  if (blocked) return { kind: "block", category: blocked, counts };
  if (edge) return { kind: "edge_only", category: edge, counts };
  if (!redacts) return { kind: "clean" };
  const masker = new Masker(raw);
  try {
    const masked = walk(body, undefined, (s) => {
      const ds = seen.get(s);
      return ds ? maskSpans(s, ds, policy, masker) : s;
    });
    return { kind: "redacted", body: masked, masker, counts };
  } catch {
    return { kind: "edge_only", category: "detector_error", counts };
  }
}

function maskSpans(text: string, ds: readonly Detection[], policy: BoundaryPolicy, masker: Masker, every = false): string {
  let out = "";
  let at = 0;
  for (const d of ds) {
    const action = policy.actions[d.category];
    if (every ? action === "allow" : action !== "redact") continue;
    out += text.slice(at, d.start) + masker.placeholder(d.category, text.slice(d.start, d.end));
    at = d.end;
  }
  return at === 0 ? text : out + text.slice(at);
}

/** A copy of a parsed body with its redacted values replaced by `masker`'s placeholders (the same value, the same one). */
export function maskBody(body: unknown, policy: BoundaryPolicy, masker: Masker): unknown {
  return walk(body, undefined, (s) => maskText(s, policy, masker));
}

/** `text` with its redacted values replaced by `masker`'s placeholders. */
export function maskText(text: string, policy: BoundaryPolicy, masker: Masker): string {
  const ds = detect(text, policy.rules);
  return ds.length === 0 ? text : maskSpans(text, ds, policy, masker);
}

/** `text` with every detected value its policy does not allow (redact, edge only) replaced by `masker`'s placeholders: what a store may keep. */
export function maskEvery(text: string, policy: BoundaryPolicy, masker: Masker): string {
  const ds = detect(text, policy.rules);
  return ds.length === 0 ? text : maskSpans(text, ds, policy, masker, true);
}

/** `f` called on every string value of `v` (protocol keys skipped); nothing copied. */
function visit(v: unknown, key: string | undefined, f: (s: string) => void): void {
  if (typeof v === "string") {
    if (key === undefined || !SKIP_KEYS.has(key)) f(v);
  } else if (Array.isArray(v)) {
    for (const x of v) visit(x, undefined, f);
  } else if (v !== null && typeof v === "object") {
    for (const k of Object.keys(v)) visit((v as Record<string, unknown>)[k], k, f);
  }
}

/** A copy of `v` with `f` applied to every string value (keys kept; protocol keys skipped). */
function walk(v: unknown, key: string | undefined, f: (s: string) => string): unknown {
  if (typeof v === "string") return key !== undefined && SKIP_KEYS.has(key) ? v : f(v);
  if (Array.isArray(v)) return v.map((x) => walk(x, undefined, f));
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = walk(x, k, f);
    return out;
  }
  return v;
}

/** `email=2,phone=1`, categories in a fixed order. */
export function countsHeader(counts: Counts): string {
  return Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([c, n]) => `${c}=${n}`)
    .join(",");
}
