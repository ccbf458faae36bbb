/**
 * Writes the tiny test GGUF (see `tiny-gguf.ts`):
 *   node --import tsx edge-agent/model/write-tiny-gguf.ts <out.gguf> [--seed N]
 */
import { parseArgs } from "node:util";
import { writeTinyGguf } from "./tiny-gguf.ts";

const USAGE = "usage: node --import tsx edge-agent/model/write-tiny-gguf.ts <out.gguf> [--seed N]";

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { seed: { type: "string" }, help: { type: "boolean", short: "h" } } });
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    console.log(USAGE);
    return 0;
  }
  const out = positionals[0];
  if (out === undefined || positionals.length > 1) {
    console.error(USAGE);
    return 2;
  }
  const seed = values.seed === undefined ? 1 : Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    console.error(`--seed must be an integer in [0, 2^32), got ${values.seed}`);
    return 2;
  }
  const size = await writeTinyGguf(out, { seed });
  console.log(`wrote ${out} (${size} bytes, seed ${seed})`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
