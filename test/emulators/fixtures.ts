/**
 * Recorded provider fixtures, loaded by name from the project's `test/fixtures/` folder.
 *
 * A fixture name is a path under `test/fixtures/` without extension, e.g.
 * `"vercel-ai/openai/openai-text"`. One name can have several recorded forms:
 * - `json`: `<name>.json`, a non-streaming response body (or an error body);
 * - `chunks`: `<name>.chunks.txt`, one JSON chunk per line: the `data:` payloads of an SSE
 *   stream, without `data: ` and without `[DONE]`;
 * - `sse`: `<name>.sse`, a raw SSE byte stream (`data: …\n\n` events, `[DONE]` included).
 *
 * Paths resolve through `import.meta.url`, so tests work on a clone without `../shared`.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

/** Absolute path of the project's `test/fixtures/` folder. */
export const FIXTURES_DIR: string = fileURLToPath(new URL("../fixtures/", import.meta.url));

/** The recorded forms a fixture can have on disk. */
export type FixtureKind = "json" | "chunks" | "sse";

const NAME_PATTERN = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;
const cache = new Map<string, Buffer>();

function extensionOf(kind: FixtureKind): string {
  switch (kind) {
    case "json":
      return ".json";
    case "chunks":
      return ".chunks.txt";
    case "sse":
      return ".sse";
    default: {
      const never: never = kind;
      throw new Error(`Unknown fixture kind: ${String(never)}`);
    }
  }
}

/** Absolute path of one recorded form of a fixture; throws on names that leave `test/fixtures/`. */
export function fixturePath(name: string, kind: FixtureKind): string {
  if (!NAME_PATTERN.test(name) || name.split("/").some((part) => part === "." || part === "..")) {
    throw new Error(`Invalid fixture name ${JSON.stringify(name)}: use e.g. "vercel-ai/openai/openai-text"`);
  }
  return path.join(FIXTURES_DIR, name + extensionOf(kind));
}

/** Whether the fixture has a recorded form of this kind. */
export function hasFixture(name: string, kind: FixtureKind): boolean {
  return existsSync(fixturePath(name, kind));
}

/** The recorded bytes, unchanged (cached: fixtures are read-only). */
export function readFixtureBytes(name: string, kind: FixtureKind): Buffer {
  const file = fixturePath(name, kind);
  let bytes = cache.get(file);
  if (bytes === undefined) {
    bytes = readFileSync(file);
    cache.set(file, bytes);
  }
  return bytes;
}

/** A `<name>.json` fixture, parsed. The caller narrows the type (e.g. to the SDK's `ChatCompletion`). */
export function loadJsonFixture(name: string): unknown {
  return JSON.parse(readFixtureBytes(name, "json").toString("utf8"));
}

/** The lines of a `<name>.chunks.txt` fixture, unparsed and unchanged (blank lines dropped). */
export function loadChunkLines(name: string): string[] {
  return readFixtureBytes(name, "chunks")
    .toString("utf8")
    .split("\n")
    .map((line) => line.replace(/\r$/, ""))
    .filter((line) => line.length > 0);
}

/** The chunks of a `<name>.chunks.txt` fixture, each parsed. The caller narrows the type. */
export function loadChunkFixture(name: string): unknown[] {
  return loadChunkLines(name).map((line): unknown => JSON.parse(line));
}

/**
 * The events of a raw `<name>.sse` fixture, unchanged: each ends with its blank line, except
 * perhaps the last, as recorded (`anthropic-fallback-tool-call.sse` ends `data: [DONE]\n`).
 */
export function loadSseEvents(name: string): string[] {
  const text = readFixtureBytes(name, "sse").toString("utf8");
  return text.split(/(?<=\n\n)/).filter((event) => event.trim().length > 0);
}
