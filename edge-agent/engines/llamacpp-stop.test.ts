/** Stop strings over a token stream: held back while ambiguous, cut before the match. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { StopStringBuffer, type TextItem } from "./llamacpp-stop.ts";

/** Pushes `pieces` (one per token) and returns what was emitted, as [token index, text] pairs. */
function feed(stops: string[], pieces: string[]): { emitted: Array<[number, string]>; stoppedAt: number | undefined } {
  const buffer = new StopStringBuffer<number>(stops);
  const emitted: Array<[number, string]> = [];
  const take = (items: Array<TextItem<number>>) => items.forEach(({ item, text }) => emitted.push([item, text]));
  for (const [i, piece] of pieces.entries()) {
    const { emit, stopped } = buffer.push(i, piece);
    take(emit);
    if (stopped) return { emitted, stoppedAt: i };
  }
  take(buffer.flush());
  return { emitted, stoppedAt: undefined };
}

test("without stop strings every token passes at once", () => {
  const buffer = new StopStringBuffer<number>(["", ""]);
  assert.deepEqual(buffer.push(0, "abc"), { emit: [{ item: 0, text: "abc" }], stopped: false });
});

test("a stop string spanning tokens is cut, and what precedes it is emitted", () => {
  assert.deepEqual(feed(["END"], ["he", "llo E", "N", "D", "more"]), {
    emitted: [
      [0, "he"],
      [1, "llo "],
    ],
    stoppedAt: 3,
  });
});

test("tokens are held only while they could begin a stop string", () => {
  const buffer = new StopStringBuffer<number>(["</s>"]);
  assert.deepEqual(buffer.push(0, "a<"), { emit: [], stopped: false }); // "<" may begin "</s>"
  assert.deepEqual(buffer.push(1, "b"), {
    emit: [
      { item: 0, text: "a<" },
      { item: 1, text: "b" },
    ],
    stopped: false,
  });
  assert.deepEqual(buffer.push(2, "x"), { emit: [{ item: 2, text: "x" }], stopped: false });
  assert.deepEqual(buffer.push(3, "</"), { emit: [], stopped: false });
  assert.deepEqual(buffer.flush(), [{ item: 3, text: "</" }]);
});

test("the earliest of several stop strings wins; a match inside one token truncates it", () => {
  assert.deepEqual(feed(["xyz", "b"], ["aabxyz"]), { emitted: [[0, "aa"]], stoppedAt: 0 });
  assert.deepEqual(feed(["STOP"], ["ok", "STOP"]), { emitted: [[0, "ok"]], stoppedAt: 1 });
  assert.deepEqual(feed(["\n\n"], ["a\n", "\nb"]), { emitted: [[0, "a"]], stoppedAt: 1 });
});

test("empty pieces (partial UTF-8) flow through and a non-match is released in full", () => {
  assert.deepEqual(feed(["ab"], ["x", "", "a", "c"]), {
    emitted: [
      [0, "x"],
      [1, ""],
      [2, "a"],
      [3, "c"],
    ],
    stoppedAt: undefined,
  });
});
