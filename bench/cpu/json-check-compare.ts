/**
 * Is a syntax-only JSON check cheaper than `JSON.parse` for stream events? A hand-written RFC 8259
 * validator (no objects built) against `JSON.parse`, over the recorded OpenAI stream's first 20
 * events (`test/fixtures/vercel-ai/openai/openai-text.chunks.txt`, ~320 bytes each), plus the three
 * substring probes a fast path would also need. ns per event, five rounds of 20,000 passes. The
 * nineteenth pass of issue 25 ran it and kept `JSON.parse` (bench/RESULTS.md).
 *
 *   node --import tsx bench/cpu/json-check-compare.ts
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const events = readFileSync(fileURLToPath(new URL("../../test/fixtures/vercel-ai/openai/openai-text.chunks.txt", import.meta.url)), "utf8")
  .split("\n")
  .filter(Boolean)
  .slice(0, 20);

const isDigit = (c: number) => c >= 48 && c <= 57;
const isHex = (c: number) => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
const ESCAPES = new Set([34, 92, 47, 98, 102, 110, 114, 116]);

/** Whether `s` is exactly one JSON value (RFC 8259), nesting at most 200 deep. */
export function validJson(s: string): boolean {
  let i = 0;
  const n = s.length;
  const space = () => {
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return;
    }
  };
  const string = (): boolean => {
    for (i++; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === 34) {
        i++;
        return true;
      }
      if (c < 32) return false;
      if (c !== 92) continue;
      const e = s.charCodeAt(++i);
      if (e === 117) {
        for (let k = 1; k <= 4; k++) if (!isHex(s.charCodeAt(i + k))) return false;
        i += 4;
      } else if (!ESCAPES.has(e)) return false;
    }
    return false;
  };
  const digits = (): boolean => {
    if (!isDigit(s.charCodeAt(i))) return false;
    while (isDigit(s.charCodeAt(i))) i++;
    return true;
  };
  const number = (): boolean => {
    if (s.charCodeAt(i) === 45) i++;
    if (s.charCodeAt(i) === 48) i++;
    else if (!digits()) return false;
    if (s.charCodeAt(i) === 46) {
      i++;
      if (!digits()) return false;
    }
    const e = s.charCodeAt(i);
    if (e === 101 || e === 69) {
      i++;
      const sign = s.charCodeAt(i);
      if (sign === 43 || sign === 45) i++;
      if (!digits()) return false;
    }
    return true;
  };
  const literal = (word: string): boolean => {
    if (!s.startsWith(word, i)) return false;
    i += word.length;
    return true;
  };
  const members = (close: number, member: () => boolean): boolean => {
    i++;
    space();
    if (s.charCodeAt(i) === close) {
      i++;
      return true;
    }
    for (;;) {
      if (!member()) return false;
      space();
      const c = s.charCodeAt(i++);
      if (c === close) return true;
      if (c !== 44) return false;
    }
  };
  const value = (depth: number): boolean => {
    if (depth > 200) return false;
    space();
    const c = s.charCodeAt(i);
    if (c === 123)
      return members(125, () => {
        space();
        if (s.charCodeAt(i) !== 34 || !string()) return false;
        space();
        if (s.charCodeAt(i++) !== 58) return false;
        return value(depth + 1);
      });
    if (c === 91) return members(93, () => value(depth + 1));
    if (c === 34) return string();
    if (c === 116) return literal("true");
    if (c === 102) return literal("false");
    if (c === 110) return literal("null");
    return number();
  };
  if (!value(0)) return false;
  space();
  return i === n;
}

// The validator agrees with JSON.parse on the recording and on every one-byte cut of its first event.
for (const text of [...events, ...Array.from({ length: events[0]?.length ?? 0 }, (_, k) => (events[0] ?? "").slice(0, k))]) {
  let parses = true;
  try {
    JSON.parse(text);
  } catch {
    parses = false;
  }
  if (validJson(text) !== parses) throw new Error(`the validator disagrees with JSON.parse on ${JSON.stringify(text.slice(0, 60))}…`);
}

const PASSES = 20_000;
let sink = 0;
const perEvent = (run: () => void): number => {
  const start = process.hrtime.bigint();
  for (let k = 0; k < PASSES; k++) run();
  return Number(process.hrtime.bigint() - start) / PASSES / events.length;
};
console.log("| round | JSON.parse ns/event | validator ns/event | 3 substring probes ns/event |\n|---:|---:|---:|---:|");
for (let round = 1; round <= 5; round++) {
  const parse = perEvent(() => {
    for (const e of events) sink += (JSON.parse(e) as { created: number }).created;
  });
  const check = perEvent(() => {
    for (const e of events) sink += validJson(e) ? 1 : 0;
  });
  const probes = perEvent(() => {
    for (const e of events) sink += e.indexOf('"tool_calls"') + e.indexOf('"usage":{') + e.indexOf('"index":');
  });
  console.log(`| ${round} | ${parse.toFixed(0)} | ${check.toFixed(0)} | ${probes.toFixed(0)} |`);
}
if (sink === 0) console.log("(nothing summed)");
