/**
 * `npm run demo` / `gearbox demo`: runs the demo (`run.ts`) and exits 0 when it went through,
 * 1 with one line on stderr when it could not start.
 */
import { pathToFileURL } from "node:url";
import { runDemo } from "./run.ts";

export const DEMO_USAGE = `usage: gearbox demo

Starts gearbox serve on free loopback ports with an in-process edge agent on a generated tiny
model (random weights: its answers are random bytes) and a local stand-in for the cloud that
answers like OpenAI, sends a scripted mix of requests (edge, cloud, exact and semantic cache hits,
a forced edge, a low-confidence upgrade, a tenant over its rate limit) and prints what Gearbox did
with each, and the totals. No key, no network; it stops by itself.
`;

export async function runDemoCommand(args: readonly string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(DEMO_USAGE);
    return 0;
  }
  if (args.length > 0) {
    process.stderr.write(`gearbox demo: unexpected argument '${args[0]}'\n\n${DEMO_USAGE}`);
    return 2;
  }
  try {
    await runDemo();
    return 0;
  } catch (err) {
    process.stderr.write(`gearbox demo: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  void runDemoCommand(process.argv.slice(2)).then((code) => process.exit(code));
}
