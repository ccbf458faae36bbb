/**
 * The loader `bin/gearbox.mjs` runs Gearbox with (bin/ts-loader.mjs): TypeScript runs with its
 * types stripped and nothing added, `./x.js` finds `./x.ts`, and a stack trace names the
 * TypeScript file and line.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const LOADER = fileURLToPath(new URL("../../bin/ts-loader.mjs", import.meta.url));
const run = promisify(execFile);

void describe("the shipped TypeScript loader", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "gearbox-loader-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    path.join(dir, "helper.ts"),
    ["export enum Kind { A = 1 }", "export interface Shape { kind: Kind }", "export const shape: Shape = { kind: Kind.A };", ""].join("\n"),
  );
  writeFileSync(
    path.join(dir, "main.ts"),
    [
      'import { shape, type Shape } from "./helper.js";',
      "function outer(): () => number {",
      "  const inner = (): number => 1;",
      "  return inner;",
      "}",
      "const s: Shape = shape;",
      "console.log(JSON.stringify({ kind: s.kind, outer: outer.toString(), inner: outer().name }));",
      'if (process.argv[2] === "throw") throw new Error("boom");',
      "",
    ].join("\n"),
  );
  const main = path.join(dir, "main.ts");

  void it("strips types, keeps enums, resolves ./x.js to ./x.ts, and adds no helper around closures", async () => {
    const { stdout } = await run(process.execPath, ["--import", LOADER, main]);
    const out = JSON.parse(stdout) as { kind: number; outer: string; inner: string };
    assert.equal(out.kind, 1);
    assert.equal(out.inner, "inner");
    // tsx's keepNames would have written `__name(() => 1, "inner")` here, run on every call.
    assert.doesNotMatch(out.outer, /__name/);
    assert.match(out.outer, /const inner = \(\) => 1/);
  });

  void it("names the TypeScript file and line in a stack trace", async () => {
    const failed = await run(process.execPath, ["--import", LOADER, main, "throw"]).then(
      () => assert.fail("the script should have thrown"),
      (err: { stderr: string }) => err,
    );
    assert.match(failed.stderr, /Error: boom/);
    assert.ok(failed.stderr.includes(`${main}:8`), failed.stderr);
  });
});
