/**
 * Counting over a text pass (`text.ts`) without building match arrays: pattern matches, substring
 * occurrences, and list-item lines, as the complexity features need them.
 */
import type { TextView } from "./text.ts";

const LIST_MARKER = /\s*(?:\d+[.)、]|[-*•]|[一二三四五六七八九十]+、)\s*\S/y;

/** Matches of a global pattern (`test` advances `lastIndex` without building match arrays). */
export function count(pattern: RegExp, text: string): number {
  pattern.lastIndex = 0;
  let n = 0;
  while (pattern.test(text)) n++;
  return n;
}

/** Non-overlapping occurrences of `needle`. */
export function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

const LINE_END = /[\n\r\u2028\u2029]/g;

/**
 * The start of the line after the one holding `from`, as `^` in a multiline pattern sees lines
 * (`onlyNewlines`: the text has no other line terminator than `\n`), or -1.
 */
function nextLine(text: string, from: number, onlyNewlines: boolean): number {
  if (onlyNewlines) {
    const newline = text.indexOf("\n", from);
    return newline < 0 ? -1 : newline + 1;
  }
  LINE_END.lastIndex = from;
  return LINE_END.test(text) ? LINE_END.lastIndex : -1;
}

/** Lines that start with a list marker (`1.`, `2)`, `-`, `*`, `•`, `一、`), as `/^\s*marker\s*\S/gm` counts them. */
export function listItems(view: TextView): number {
  const text = view.lower;
  // latin1[13]: carriage returns.
  const onlyNewlines = (view.latin1[13] ?? 0) === 0 && !text.includes("\u2028") && !text.includes("\u2029");
  let n = 0;
  for (let line = 0; line >= 0;) {
    LIST_MARKER.lastIndex = line;
    if (LIST_MARKER.test(text)) {
      n++;
      line = nextLine(text, LIST_MARKER.lastIndex, onlyNewlines);
    } else {
      line = nextLine(text, line, onlyNewlines);
    }
  }
  return n;
}
