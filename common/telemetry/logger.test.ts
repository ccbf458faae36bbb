import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const LOGGER = fileURLToPath(new URL("./logger.ts", import.meta.url));

test("createLogger: lines still buffered when the process exits are written out, in order, as JSON", () => {
  // 5,000 lines logged in one turn, then process.exit: none can have been written asynchronously yet.
  const script = `
    import { createLogger } from ${JSON.stringify(LOGGER)};
    const log = createLogger("info", "t");
    for (let i = 0; i < 5000; i++) log.info({ i }, "line");
    process.exit(0);
  `;
  const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" });
  const lines = out
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { i: number; component: string; msg: string });
  assert.equal(lines.length, 5000);
  assert.deepEqual(
    lines.map((l) => l.i),
    Array.from({ length: 5000 }, (_, i) => i),
  );
  assert.equal(lines[0]?.component, "t");
});
